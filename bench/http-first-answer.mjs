#!/usr/bin/env node
// `serve --http`'s cold start against its references, with a figure the shared machine's load
// moves less than wall time: spawn to the first answered `initialize` POST (as npm run bench
// measures it: a bearer, no sandbox, the request repeated every 2 ms until something listens),
// and the server's CPU time when that answer arrives (Linux /proc schedstat: its main thread,
// and all its threads). References: the minimal server on SDK 2.x as it is
// (bench/floor-server-v2.mjs), the same server bundled by esbuild with Node's compile cache
// (what any server answering through the SDK's HTTP transport pays at least), and the bridge.
// Every path takes its turn in each round; medians. Writes build/bench/http-first-answer.json.
// Usage: node bench/http-first-answer.mjs [--runs 10] [--cli other/dist/cli.js]
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEMO_KEYS } from "@portfolio-mcp/sandbox";
import { build } from "esbuild";
import { esmBundleOptions } from "../scripts/bundle.mjs";
import { stopChildren } from "../scripts/lib/children.mjs";
import { cpuOf, timeToHttpAnswer } from "./lib/cold-start.mjs";
import { QUOTAS_RAISED } from "./lib/fleet.mjs";
import { sandboxOpenApi } from "./lib/openapi.mjs";
import { freePort, sandboxProcess, stdioClient } from "./lib/processes.mjs";
import { percentile, round } from "./lib/stats.mjs";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "10" }, cli: { type: "string", multiple: true } },
});
const root = new URL("..", import.meta.url).pathname;
const work = join(root, "build", "bench", "http-first-answer");
mkdirSync(work, { recursive: true });
const node = process.execPath;
const clis = values.cli?.length ? values.cli : [join(root, "dist", "cli.js")];
const token = "bench-cold-start-token-0123456789";

const key = { ...DEMO_KEYS.full, tokenTtlSeconds: 60 };
const sandbox = await sandboxProcess({ rateLimit: false, keys: [key], requestLogLimit: 1000 });
const ourEnv = {
  PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
  PORTFOLIO_API_KEY_ID: key.keyId,
  PORTFOLIO_API_SECRET: key.secret,
  PORTFOLIO_DELEGATED_USER_EMAIL: "camille.martin@aurore-capital.example",
  PORTFOLIO_STATE_DIR: join(work, "state"),
  PORTFOLIO_LOG_LEVEL: "warn",
  ...QUOTAS_RAISED,
};
const openapiFile = join(work, "openapi.json");
const lister = await stdioClient(node, [clis[0]], ourEnv);
writeFileSync(
  openapiFile,
  JSON.stringify(sandboxOpenApi(sandbox.baseUrl, (await lister.listTools()).tools)),
);
await lister.close();
const floorBundled = await bundleFloor();

/** Each path: its arguments for a port, its environment, the headers of its request. */
const paths = {
  ...Object.fromEntries(
    clis.map((cli, i) => [
      clis.length === 1 ? "ours" : `ours_${i}`,
      (port) => ({
        args: [cli, "serve", "--http", "--port", String(port)],
        env: { ...ourEnv, PORTFOLIO_MCP_TOKEN: token },
        headers: { authorization: `Bearer ${token}` },
      }),
    ]),
  ),
  floor_v2: floor(join(root, "bench", "floor-server-v2.mjs")),
  floor_v2_bundled: floor(floorBundled),
  bridge: (port) => ({
    args: [
      join(root, "node_modules", "@ivotoby", "openapi-mcp-server", "bin", "mcp-server.js"),
      ...["--api-base-url", sandbox.baseUrl, "--openapi-spec", openapiFile],
      ...["--headers", "Authorization:Bearer unused", "--transport", "http"],
      ...["--port", String(port), "--host", "127.0.0.1"],
    ],
    env: {},
    headers: {},
  }),
};

function floor(file) {
  return (port) => ({
    args: [file, "--http"],
    env: { FLOOR_BASE_URL: sandbox.baseUrl, FLOOR_BEARER: "unused", FLOOR_PORT: String(port) },
    headers: {},
  });
}

/** The minimal server as one esbuild bundle that turns on Node's compile cache first. */
async function bundleFloor() {
  const dir = join(work, "floor-bundle");
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, "entry.mjs");
  writeFileSync(
    entry,
    `import { enableCompileCache } from "node:module";
try { enableCompileCache(new URL("./compile-cache", import.meta.url).pathname); } catch {}
await import(${JSON.stringify(join(root, "bench", "floor-server-v2.mjs"))});
`,
  );
  await build(esmBundleOptions(entry, join(dir, "out")));
  return join(dir, "out", "entry.js");
}

async function firstAnswer(path) {
  const port = await freePort();
  const { args, env, headers } = path(port);
  let cpu = null;
  const wall = await timeToHttpAnswer(node, args, env, `http://127.0.0.1:${port}/mcp`, headers, {
    atAnswer: (pid) => {
      cpu = cpuOf(pid);
    },
  });
  return { wall, ...cpu };
}

const runs = Number(values.runs);
const names = Object.keys(paths);
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (let i = 0; i < runs; i++)
  for (const name of [...names.slice(i % names.length), ...names.slice(0, i % names.length)])
    samples[name].push(await firstAnswer(paths[name]));
await sandbox.close();
await stopChildren();

const medians = Object.fromEntries(
  Object.entries(samples).map(([name, s]) => [
    name,
    Object.fromEntries(
      ["wall", "cpu_main", "cpu_all"].map((k) => [
        k,
        round(
          percentile(
            s.map((x) => x[k]),
            50,
          ),
          1,
        ),
      ]),
    ),
  ]),
);
const result = { date: new Date().toISOString(), runs, ms: medians, ratio_vs_bridge: {} };
for (const [name, m] of Object.entries(medians))
  if (name !== "bridge")
    result.ratio_vs_bridge[name] = {
      wall: round(m.wall / medians.bridge.wall, 3),
      cpu_main: round(m.cpu_main / medians.bridge.cpu_main, 3),
    };
writeFileSync(join(root, "build", "bench", "http-first-answer.json"), JSON.stringify(result));
console.log(JSON.stringify(result, null, 2));
