#!/usr/bin/env node
// npm run bench: side-by-side figures, on loopback, against a sandbox in its own process.
// Prints a table and writes build/bench/results.json (or --out; --update-reference also
// rewrites the committed bench/results.json). See the README's performance section.
// Our server is measured without a contract (the curated tools) and, for tools/list and cold
// start, with the key's full contract export (build/bench/contract-full.json, written by our CLI).
// Cold start, the first tools/list, the views' sizes and memory (bench/lib/startup-section.mjs)
// also go to build/bench.json, each figure with its ratio; --startup-only measures just those.
//   npm run bench [-- --quick] [--startup-only] [--out FILE] [--update-reference]
import { createHmac, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEMO_KEYS } from "@portfolio-mcp/sandbox";
import { Agent, request } from "undici";
import { bundle } from "../scripts/bundle.mjs";
import { stopChildren } from "../scripts/lib/children.mjs";
import { QUOTAS_RAISED } from "./lib/fleet.mjs";
import { MODEL_VISIBLE_TARGET, modelVisibleBytes } from "./lib/model-visible.mjs";
import { bestOfThree, modernEra, printModern } from "./lib/modern-era.mjs";
import { sandboxOpenApi } from "./lib/openapi.mjs";
import {
  freePort,
  httpClient,
  output,
  sandboxProcess,
  spawnUntil,
  stdioClient,
} from "./lib/processes.mjs";
import { topFrames } from "./lib/profile.mjs";
import { RESULT_OPTIONS, writeResults } from "./lib/results.mjs";
import { printStartup, startupSection, startupTargets } from "./lib/startup-section.mjs";
import { interleaved, percentile, round, summary } from "./lib/stats.mjs";
import { printTelemetry, TELEMETRY_TARGET, telemetryOverhead } from "./lib/telemetry-overhead.mjs";

const { values: options } = parseArgs({
  options: {
    ...RESULT_OPTIONS,
    quick: { type: "boolean", default: false },
    "startup-only": { type: "boolean", default: false },
  },
});
const root = new URL("..", import.meta.url).pathname;
const quick = options.quick;
const CALLS = quick ? 200 : 2_000;
const BLOCK = 50;
const CONCURRENCY = 50;
const CONCURRENCY_SECONDS = quick ? 2 : 10;
const COLD_STARTS = quick ? 5 : 10;
const MEMORY_CALLS = quick ? 1_000 : 10_000;
const ARGS = { status: "active", limit: 50 };
const work = join(root, "build", "bench");
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const log = (line) => process.stderr.write(`${line}\n`);

// The sandbox: one key for our server (bearers live 60 s), one whose fixed bearer the others use.
const ours = { ...DEMO_KEYS.full, tokenTtlSeconds: 60 };
const fixed = {
  ...DEMO_KEYS.full,
  keyId: "benchfixed",
  secret: "bench-fixed-secret-value",
  tokenTtlSeconds: 86_400,
};
const sandbox = await sandboxProcess({
  rateLimit: false,
  keys: [ours, fixed],
  requestLogLimit: 1000,
});
const bearer = await exchange(sandbox.baseUrl, fixed);
const openapiFile = join(work, "openapi.json");

const node = process.execPath;
const cli = join(root, "dist", "cli.js");
const bridgeBin = join(
  root,
  "node_modules",
  "@ivotoby",
  "openapi-mcp-server",
  "bin",
  "mcp-server.js",
);
// Our server is configured here, whatever the caller's environment (cleanEnv drops PORTFOLIO_*).
const ourEnv = {
  PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
  PORTFOLIO_API_KEY_ID: ours.keyId,
  PORTFOLIO_API_SECRET: ours.secret,
  PORTFOLIO_DELEGATED_USER_EMAIL: "camille.martin@aurore-capital.example",
  PORTFOLIO_STATE_DIR: join(work, "state"),
  PORTFOLIO_LOG_LEVEL: "warn",
  // Thousands of calls a minute through one client: its MCP request rate (600 a minute by
  // default) and its share of the API key's rate (half of 600 a minute) are raised so that the
  // figures measure the server, not its quotas (tests and npm run bench:fair-share cover them).
  ...QUOTAS_RAISED,
};
// The same server with the key's full contract: the export our CLI writes for the demo key,
// addressed to this sandbox. It must list what the sandbox itself exports for the key.
const contractFile = join(work, "contract-full.json");
writeFileSync(
  contractFile,
  await output(node, [
    cli,
    "sandbox",
    "contract",
    "--key",
    ours.keyId,
    "--server-url",
    sandbox.baseUrl,
  ]),
);
const contractOperations = operationIds(JSON.parse(readFileSync(contractFile, "utf8")));
const served = operationIds(
  await (await fetch(new URL(`/_admin/keys/${ours.keyId}/contract.json`, sandbox.baseUrl))).json(),
);
if (contractOperations.join() !== served.join())
  throw new Error("the CLI's contract export differs from the sandbox's own export of the key");
const contractEnv = { ...ourEnv, PORTFOLIO_CONTRACT_FILE: contractFile };
const floorEnv = { FLOOR_BASE_URL: sandbox.baseUrl, FLOOR_BEARER: bearer };
const floors = {
  v1: join(root, "bench", "floor-server.mjs"),
  v2: join(root, "bench", "floor-server-v2.mjs"),
};
const bridgeArgs = [
  "--api-base-url",
  sandbox.baseUrl,
  "--openapi-spec",
  openapiFile,
  "--headers",
  `Authorization:Bearer ${bearer}`,
];

// The bridge's OpenAPI document carries our titles and descriptions: only the shapes differ.
const lister = await stdioClient(node, [cli], ourEnv);
writeFileSync(
  openapiFile,
  JSON.stringify(sandboxOpenApi(sandbox.baseUrl, (await lister.listTools()).tools)),
);
await lister.close();

const results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version, load_average: loadavg() },
  calls_per_path: CALLS,
};

// 0. Cold start, first tools/list, views, memory: the dist/ bin and the MCP Bundle's build.
const bundled = await bundle(root, join(work, "bundle"));
results.startup = await startupSection(
  {
    node,
    root,
    cli,
    bundled,
    bridge: { bin: bridgeBin, args: bridgeArgs },
    floors,
    env: ourEnv,
    contractEnv,
    floorEnv,
    runs: COLD_STARTS,
    memoryCalls: MEMORY_CALLS,
    args: ARGS,
  },
  log,
);
if (options["startup-only"]) {
  await sandbox.close();
  await stopChildren();
  results.targets = startupTargets(results.startup);
  console.log(printStartup(results.startup));
  printTargets(results.targets);
  writeBenchJson(results);
  process.exit(0);
}

const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
const direct = async () => {
  const res = await request(`${sandbox.baseUrl}/operations?status=active&limit=50`, {
    headers: { authorization: `Bearer ${bearer}` },
    dispatcher,
  });
  return res.body.text();
};
const tool = (client, name) => async () => {
  const result = await client.callTool({ name, arguments: ARGS });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result;
};
let ourCalls = 0;
const counted = (fn) => async () => {
  ourCalls++;
  return fn();
};

// 1. Read overhead over stdio.
log(
  `read overhead, stdio: ${CALLS} sequential list_operations per path, blocks of ${BLOCK}, interleaved`,
);
const stdio = {
  ours: await stdioClient(node, [cli], ourEnv),
  floor: await stdioClient(node, [floors.v1], floorEnv),
  floor_v2: await stdioClient(node, [floors.v2], floorEnv),
  bridge: await stdioClient(node, [bridgeBin, ...bridgeArgs, "--transport", "stdio"], {}),
};
const stdioSamples = await interleaved(
  {
    ours: counted(tool(stdio.ours, "list_operations")),
    floor: tool(stdio.floor, "list_operations"),
    floor_v2: tool(stdio.floor_v2, "list_operations"),
    bridge: tool(stdio.bridge, "operations-lst"),
    direct,
  },
  { calls: CALLS, block: BLOCK },
);
results.read_stdio = latencyTable(stdioSamples);

// 2. The same over Streamable HTTP.
log("read overhead, Streamable HTTP");
const token = randomBytes(24).toString("base64url");
const ourHttp = await spawnUntil(
  node,
  [cli, "serve", "--http", "--port", "0"],
  {
    ...ourEnv,
    PORTFOLIO_MCP_TOKEN: token,
  },
  /URL\s+(http:\/\/\S+)/,
);
const floorHttp = await spawnUntil(node, [floors.v1, "--http"], floorEnv, /listening at (\S+)/);
const floorV2Http = await spawnUntil(node, [floors.v2, "--http"], floorEnv, /listening at (\S+)/);
const bridgePort = await freePort();
const bridgeHttp = await spawnUntil(
  node,
  [
    bridgeBin,
    ...bridgeArgs,
    "--transport",
    "http",
    "--port",
    String(bridgePort),
    "--host",
    "127.0.0.1",
  ],
  {},
  /(listening|running|started)/i,
);
const http = {
  ours: await httpClient(ourHttp.match[1], { Authorization: `Bearer ${token}` }),
  floor: await httpClient(floorHttp.match[1]),
  floor_v2: await httpClient(floorV2Http.match[1]),
  bridge: await httpClient(`http://127.0.0.1:${bridgePort}/mcp`),
};
const httpSamples = await interleaved(
  {
    ours: counted(tool(http.ours, "list_operations")),
    floor: tool(http.floor, "list_operations"),
    floor_v2: tool(http.floor_v2, "list_operations"),
    bridge: tool(http.bridge, "operations-lst"),
    direct,
  },
  { calls: CALLS, block: BLOCK, maxSecondsPerPath: quick ? 10 : 30 },
);
results.read_http = latencyTable(httpSamples);

// 3. Concurrency: 50 callers for 10 s through our server and the minimal server on SDK 2.x
//    (best of three rounds each, stdio and HTTP), and directly.
log(`concurrency: ${CONCURRENCY} callers for ${CONCURRENCY_SECONDS} s, best of three`);
const inFlight = { callers: CONCURRENCY, seconds: CONCURRENCY_SECONDS };
const stdioRounds = await bestOfThree(
  {
    ours: counted(tool(stdio.ours, "list_operations")),
    floor_v2: tool(stdio.floor_v2, "list_operations"),
  },
  inFlight,
);
const httpRounds = await bestOfThree(
  {
    ours: counted(tool(http.ours, "list_operations")),
    floor_v2: tool(http.floor_v2, "list_operations"),
  },
  inFlight,
);
results.concurrency = {
  callers: CONCURRENCY,
  seconds: CONCURRENCY_SECONDS,
  ours_stdio: stdioRounds.ours,
  floor_v2_stdio: stdioRounds.floor_v2,
  ours_http: httpRounds.ours,
  floor_v2_http: httpRounds.floor_v2,
  direct: await saturate(direct),
};
results.concurrency.throughput_ratio = round(
  results.concurrency.ours_stdio.calls_per_s / results.concurrency.direct.calls_per_s,
  3,
);
results.concurrency.throughput_vs_floor_v2 = round(
  results.concurrency.ours_stdio.calls_per_s / results.concurrency.floor_v2_stdio.calls_per_s,
  3,
);
results.concurrency.throughput_vs_floor_v2_http = round(
  results.concurrency.ours_http.calls_per_s / results.concurrency.floor_v2_http.calls_per_s,
  3,
);

// 4. Token exchanges of our servers per 1,000 calls, with 60 s bearers.
const stats = await sandbox.stats();
const ourExchanges = stats.tokenExchanges - 1; // one was the benchmark's own fixed bearer
results.token_exchanges = {
  bearer_lifetime_s: 60,
  our_calls: ourCalls,
  exchanges: ourExchanges,
  per_1000_calls: round((ourExchanges / ourCalls) * 1000, 2),
  run_seconds: round(process.uptime(), 1),
};

// 5. Context cost.
const ourTools = await stdio.ours.listTools();
const bridgeTools = await stdio.bridge.listTools();
const ourPage = await stdio.ours.callTool({ name: "list_operations", arguments: ARGS });
const bridgePage = await stdio.bridge.callTool({ name: "operations-lst", arguments: ARGS });
const rawPage = await direct();
results.context = {
  tools_list_bytes: {
    ours: bytes(ourTools),
    bridge: bytes(bridgeTools),
    ours_tools: ourTools.tools.length,
    bridge_tools: bridgeTools.tools.length,
  },
  list_operations_50_bytes: {
    ours: bytes(ourPage),
    bridge: bytes(bridgePage),
    raw_api_page: Buffer.byteLength(rawPage),
  },
};
results.context.tools_list_bytes.ratio = round(
  results.context.tools_list_bytes.ours / results.context.tools_list_bytes.bridge,
  3,
);

// 5b. The same listing once the key's full contract is loaded: the generic tools join.
const withContract = await stdioClient(node, [cli], contractEnv);
const contractTools = await withContract.listTools();
await withContract.close();
if (!contractTools.tools.some((t) => t.name === "find_api_operations"))
  throw new Error("the server given PORTFOLIO_CONTRACT_FILE lists no long-tail tools");
results.contract = {
  operations: contractOperations.length,
  tools: { without: ourTools.tools.length, with: contractTools.tools.length },
  tools_list_bytes: withWithout(bytes(ourTools), bytes(contractTools)),
  model_visible_bytes: withWithout(modelVisible(ourTools), modelVisible(contractTools)),
};

for (const client of [...Object.values(stdio), ...Object.values(http)]) await client.close();

// 5c. The 2026-07-28 era: the same calls through the SDK's 2.x client pinned to it.
log("read overhead and concurrency, 2026-07-28 era");
results.modern = await modernEra({
  ours: {
    stdio: [node, [cli], ourEnv],
    http: [ourHttp.match[1], { Authorization: `Bearer ${token}` }],
  },
  floor: { stdio: [node, [floors.v2], floorEnv], http: [floorV2Http.match[1]] },
  calls: CALLS,
  block: BLOCK,
  callers: CONCURRENCY,
  seconds: CONCURRENCY_SECONDS,
  args: ARGS,
});
await stopChildren(
  [ourHttp, floorHttp, floorV2Http, bridgeHttp].map((spawned) => spawned.child.pid),
);

// 7. What the audit trail and tracing cost per call: off, audit, audit + tracing at 0% and 100%.
log("telemetry overhead: audit trail and tracing, interleaved");
results.telemetry_overhead = await telemetryOverhead({
  node,
  cli,
  env: ourEnv,
  work,
  calls: CALLS,
  block: BLOCK,
  args: ARGS,
});

// 8. A CPU profile of our server on the hot path.
log("CPU profile of the hot path");
const profileDir = join(work, "profile");
const profiled = await stdioClient(node, ["--cpu-prof", "--cpu-prof-dir", profileDir, cli], ourEnv);
const hot = tool(profiled, "list_operations");
for (let i = 0; i < CALLS; i++) await hot();
await profiled.close();
await waitFor(() => {
  try {
    return topFrames(profileDir).length > 0;
  } catch {
    return false;
  }
});
results.profile_top_frames = topFrames(profileDir);

await dispatcher.close();
await sandbox.close();
await stopChildren();

results.targets = {
  "stdio p50 within 10% of the protocol floor": results.read_stdio.ratios.ours_vs_floor_p50 <= 1.1,
  "stdio p50 below the bridge's": results.read_stdio.ratios.ours_vs_bridge_p50 < 1,
  "http p50 within 10% of the protocol floor": results.read_http.ratios.ours_vs_floor_p50 <= 1.1,
  "http p50 below the bridge's": results.read_http.ratios.ours_vs_bridge_p50 < 1,
  "stdio p50 at most the minimal server's on SDK 2.x (2025 era)":
    results.read_stdio.ratios.ours_vs_floor_v2_p50 <= 1,
  "http p50 at most the minimal server's on SDK 2.x (2025 era)":
    results.read_http.ratios.ours_vs_floor_v2_p50 <= 1,
  "stdio p50 at most the minimal server's (2026 era)": results.modern.stdio.ratios.p50 <= 1,
  "http p50 at most the minimal server's (2026 era)": results.modern.http.ratios.p50 <= 1,
  "stdio throughput, 50 in flight, at least the minimal server's (2025 era)":
    results.concurrency.throughput_vs_floor_v2 >= 1,
  "http throughput, 50 in flight, at least the minimal server's (2025 era)":
    results.concurrency.throughput_vs_floor_v2_http >= 1,
  "stdio throughput, 50 in flight, at least the minimal server's (2026 era)":
    results.modern.stdio.ratios.throughput >= 1,
  "http throughput, 50 in flight, at least the minimal server's (2026 era)":
    results.modern.http.ratios.throughput >= 1,
  "tools/list at most half the bridge's bytes": results.context.tools_list_bytes.ratio <= 0.5,
  [`model-visible bytes with the full contract at most ${MODEL_VISIBLE_TARGET.toLocaleString("en")}`]:
    results.contract.model_visible_bytes.with <= MODEL_VISIBLE_TARGET,
  [`audit trail and tracing (0% sampled) within ${TELEMETRY_TARGET}x of off (p50)`]:
    results.telemetry_overhead.audit_traced_0.vs_off.p50 <= TELEMETRY_TARGET,
};
Object.assign(results.targets, startupTargets(results.startup));
print(results);
writeBenchJson(results);
writeResults(results, options, {
  fresh: "build/bench/results.json",
  reference: "bench/results.json",
});

function latencyTable(samples) {
  const table = Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, summary(s)]));
  const ratio = (a, b, p) => round(table[a][p] / table[b][p], 3);
  table.ratios = {
    ours_vs_floor_p50: ratio("ours", "floor", "p50"),
    ours_vs_floor_p99: ratio("ours", "floor", "p99"),
    ours_vs_floor_v2_p50: ratio("ours", "floor_v2", "p50"),
    ours_vs_direct_p50: ratio("ours", "direct", "p50"),
    ours_vs_bridge_p50: ratio("ours", "bridge", "p50"),
    ours_vs_bridge_p99: ratio("ours", "bridge", "p99"),
    floor_vs_direct_p50: ratio("floor", "direct", "p50"),
  };
  return table;
}

async function saturate(call) {
  const samples = [];
  const deadline = Date.now() + CONCURRENCY_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < deadline) {
        const started = process.hrtime.bigint();
        await call();
        samples.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }),
  );
  return {
    calls_per_s: round(samples.length / CONCURRENCY_SECONDS, 1),
    p50: round(percentile(samples, 50), 2),
    p99: round(percentile(samples, 99), 2),
  };
}

async function exchange(baseUrl, key) {
  const timestamp = Math.floor(Date.now() / 1000);
  const nonce = randomBytes(16).toString("hex");
  const signature = createHmac("sha256", key.secret)
    .update(["SERVICE-EXTERNAL-API-TOKEN-V1", key.keyId, timestamp, nonce].join("\n"))
    .digest("hex");
  const res = await fetch(`${baseUrl}/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ key_id: key.keyId, timestamp, nonce, signature }),
  });
  return (await res.json()).access_token;
}

async function waitFor(check, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

function bytes(value) {
  return Buffer.byteLength(JSON.stringify(value));
}

/** What a model reads of a listing (bench/lib/model-visible.mjs). */
function modelVisible({ tools }) {
  return modelVisibleBytes(tools);
}

function withWithout(without, withIt) {
  return { without, with: withIt, ratio: round(withIt / without, 3) };
}

function operationIds(document) {
  return Object.values(document.paths)
    .flatMap((item) => Object.values(item).map((op) => op?.operationId))
    .filter(Boolean)
    .sort();
}

function print(r) {
  const row = (label, t) =>
    `  ${label.padEnd(8)} p50 ${String(t.p50).padStart(7)} ms   p99 ${String(t.p99).padStart(7)} ms   (${t.n} calls)`;
  const lines = [];
  for (const [name, t] of [
    ["stdio", r.read_stdio],
    ["HTTP", r.read_http],
  ]) {
    lines.push(`list_operations (50 items) over ${name}, ${r.calls_per_path} calls per path:`);
    for (const path of ["direct", "floor", "floor_v2", "ours", "bridge"])
      lines.push(row(path, t[path]));
    lines.push(
      `  ours/floor p50 ${t.ratios.ours_vs_floor_p50}, p99 ${t.ratios.ours_vs_floor_p99}; ours/floor (SDK 2.x) p50 ${t.ratios.ours_vs_floor_v2_p50}; ours/bridge p50 ${t.ratios.ours_vs_bridge_p50}; ours/direct p50 ${t.ratios.ours_vs_direct_p50}`,
    );
  }
  const c = r.concurrency;
  lines.push(
    `concurrency, ${c.callers} callers for ${c.seconds} s (best of three): stdio ours ${c.ours_stdio.calls_per_s}/s (p99 ${c.ours_stdio.p99} ms), floor (SDK 2.x) ${c.floor_v2_stdio.calls_per_s}/s, ratio ${c.throughput_vs_floor_v2}; HTTP ours ${c.ours_http.calls_per_s}/s, floor (SDK 2.x) ${c.floor_v2_http.calls_per_s}/s, ratio ${c.throughput_vs_floor_v2_http}; direct ${c.direct.calls_per_s}/s (p99 ${c.direct.p99} ms), ours/direct ${c.throughput_ratio}`,
  );
  lines.push(printModern(r.modern));
  const t = r.token_exchanges;
  lines.push(
    `token exchanges: ${t.exchanges} for ${t.our_calls} calls over ${t.run_seconds} s with 60 s bearers = ${t.per_1000_calls} per 1,000 calls`,
  );
  lines.push(printStartup(r.startup));
  const x = r.context;
  lines.push(
    `tools/list: ours ${x.tools_list_bytes.ours} B (${x.tools_list_bytes.ours_tools} tools), bridge ${x.tools_list_bytes.bridge} B (${x.tools_list_bytes.bridge_tools} tools), ratio ${x.tools_list_bytes.ratio}`,
  );
  const w = r.contract;
  lines.push(
    `with the full contract (${w.operations} operations): tools/list ${w.tools_list_bytes.with} B (${w.tools.with} tools) against ${w.tools_list_bytes.without} B (${w.tools.without} tools) without, ratio ${w.tools_list_bytes.ratio}`,
  );
  lines.push(
    `  model-visible (JSON.stringify({name, description, inputSchema}) summed over tools/list): ${w.model_visible_bytes.with} B with, ${w.model_visible_bytes.without} B without, ratio ${w.model_visible_bytes.ratio}`,
  );
  lines.push(
    `50-item list_operations result: ours ${x.list_operations_50_bytes.ours} B, bridge ${x.list_operations_50_bytes.bridge} B, raw API page ${x.list_operations_50_bytes.raw_api_page} B`,
  );
  lines.push(printTelemetry(r.telemetry_overhead));
  lines.push("top frames (self time) of our server on the hot path:");
  for (const f of r.profile_top_frames.slice(0, 10))
    lines.push(`  ${String(f.self_pct).padStart(5)}%  ${f.ours ? "*" : " "} ${f.frame}`);
  console.log(lines.join("\n"));
  printTargets(r.targets);
}

function printTargets(targets) {
  const lines = ["targets:"];
  for (const [target, met] of Object.entries(targets))
    lines.push(`  ${met ? "met   " : "MISSED"} ${target}`);
  console.log(lines.join("\n"));
}

/** build/bench.json: every figure of the run, each with its ratio (bench/lib/startup-section.mjs). */
function writeBenchJson(r) {
  writeFileSync(join(root, "build", "bench.json"), `${JSON.stringify(r, null, 2)}\n`);
}
