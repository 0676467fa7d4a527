#!/usr/bin/env node
// npm run bench: side-by-side figures, on loopback, against a sandbox in its own process.
// Prints a table and writes build/bench/results.json (or --out; --update-reference also
// rewrites the committed bench/results.json). See the README's performance section.
// Our server is measured without a contract (the curated tools) and, for tools/list and cold
// start, with the key's full contract export (build/bench/contract-full.json, written by our CLI).
//   npm run bench [-- --quick] [--out FILE] [--update-reference]
import { createHmac, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEMO_KEYS } from "@portfolio-mcp/sandbox";
import { Agent, request } from "undici";
import { bundle } from "../scripts/bundle.mjs";
import { stopChildren } from "../scripts/lib/children.mjs";
import { QUOTAS_RAISED } from "./lib/fleet.mjs";
import { MODEL_VISIBLE_TARGET, modelVisibleBytes } from "./lib/model-visible.mjs";
import { sandboxOpenApi } from "./lib/openapi.mjs";
import {
  freePort,
  httpClient,
  output,
  sandboxProcess,
  spawnUntil,
  stdioClient,
  timeToInitialize,
} from "./lib/processes.mjs";
import { topFrames } from "./lib/profile.mjs";
import { RESULT_OPTIONS, writeResults } from "./lib/results.mjs";
import { interleaved, percentile, round, summary } from "./lib/stats.mjs";
import { printTelemetry, TELEMETRY_TARGET, telemetryOverhead } from "./lib/telemetry-overhead.mjs";

const { values: options } = parseArgs({
  options: { ...RESULT_OPTIONS, quick: { type: "boolean", default: false } },
});
const root = new URL("..", import.meta.url).pathname;
const quick = options.quick;
const CALLS = quick ? 200 : 2_000;
const BLOCK = 50;
const CONCURRENCY = 50;
const CONCURRENCY_SECONDS = quick ? 2 : 10;
const COLD_STARTS = quick ? 5 : 20;
const CONTRACT_COLD_START_TARGET = 1.2;
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
const bridgeArgs = [
  "--api-base-url",
  sandbox.baseUrl,
  "--openapi-spec",
  openapiFile,
  "--headers",
  `Authorization:Bearer ${bearer}`,
];

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

const results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version },
  calls_per_path: CALLS,
};

// 1. Read overhead over stdio.
log(
  `read overhead, stdio: ${CALLS} sequential list_operations per path, blocks of ${BLOCK}, interleaved`,
);
const oursStdio = await stdioClient(node, [cli], ourEnv);
// The bridge's OpenAPI document carries our titles and descriptions: only the shapes differ.
writeFileSync(
  openapiFile,
  JSON.stringify(sandboxOpenApi(sandbox.baseUrl, (await oursStdio.listTools()).tools)),
);
const stdio = {
  ours: oursStdio,
  floor: await stdioClient(node, [join(root, "bench", "floor-server.mjs")], floorEnv),
  bridge: await stdioClient(node, [bridgeBin, ...bridgeArgs, "--transport", "stdio"], {}),
};
const stdioSamples = await interleaved(
  {
    ours: counted(tool(stdio.ours, "list_operations")),
    floor: tool(stdio.floor, "list_operations"),
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
const floorHttp = await spawnUntil(
  node,
  [join(root, "bench", "floor-server.mjs"), "--http"],
  floorEnv,
  /listening at (\S+)/,
);
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
  bridge: await httpClient(`http://127.0.0.1:${bridgePort}/mcp`),
};
const httpSamples = await interleaved(
  {
    ours: counted(tool(http.ours, "list_operations")),
    floor: tool(http.floor, "list_operations"),
    bridge: tool(http.bridge, "operations-lst"),
    direct,
  },
  { calls: CALLS, block: BLOCK, maxSecondsPerPath: quick ? 10 : 30 },
);
results.read_http = latencyTable(httpSamples);

// 3. Concurrency: 50 callers for 10 s, through our server (stdio) and directly.
log(`concurrency: ${CONCURRENCY} callers for ${CONCURRENCY_SECONDS} s`);
results.concurrency = {
  callers: CONCURRENCY,
  seconds: CONCURRENCY_SECONDS,
  ours_stdio: await saturate(counted(tool(stdio.ours, "list_operations"))),
  direct: await saturate(direct),
};
results.concurrency.throughput_ratio = round(
  results.concurrency.ours_stdio.calls_per_s / results.concurrency.direct.calls_per_s,
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
await stopChildren([ourHttp, floorHttp, bridgeHttp].map((spawned) => spawned.child.pid));

// 6. Cold start: spawn to the initialize answer, alternating ours (as built, and as shipped in
//    the bundle; without a contract, then with the full one) and the bridge.
log(`cold start: median of ${COLD_STARTS}`);
const bundled = await bundle(root, join(work, "bundle"));
const cold = { ours_dist: [], ours_bundle: [], bridge: [] };
const coldContract = { ours_dist: [], ours_bundle: [] };
for (let i = 0; i < COLD_STARTS; i++) {
  // Without and with the contract take turns going first, so neither always follows the other.
  const pairs = [
    [cold, ourEnv],
    [coldContract, contractEnv],
  ];
  if (i % 2) pairs.reverse();
  for (const [samples, env] of pairs) {
    samples.ours_dist.push(await timeToInitialize(node, [cli], env));
    samples.ours_bundle.push(await timeToInitialize(node, [bundled], env));
  }
  cold.bridge.push(
    await timeToInitialize(node, [bridgeBin, ...bridgeArgs, "--transport", "stdio"], {}),
  );
}
const median = (samples) => round(percentile(samples, 50), 1);
results.cold_start_ms = Object.fromEntries(Object.entries(cold).map(([k, v]) => [k, median(v)]));
results.contract.cold_start_ms = {
  bundle: withWithout(median(cold.ours_bundle), median(coldContract.ours_bundle)),
  dist: withWithout(median(cold.ours_dist), median(coldContract.ours_dist)),
};
results.cold_start_ms.ratio_bundle = round(
  results.cold_start_ms.ours_bundle / results.cold_start_ms.bridge,
  3,
);
results.cold_start_ms.ratio_dist = round(
  results.cold_start_ms.ours_dist / results.cold_start_ms.bridge,
  3,
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
  "cold start at most half the bridge's (the shipped bundle)":
    results.cold_start_ms.ratio_bundle <= 0.5,
  "tools/list at most half the bridge's bytes": results.context.tools_list_bytes.ratio <= 0.5,
  [`cold start with the full contract within ${CONTRACT_COLD_START_TARGET}x of without (the shipped bundle)`]:
    results.contract.cold_start_ms.bundle.ratio <= CONTRACT_COLD_START_TARGET,
  [`model-visible bytes with the full contract at most ${MODEL_VISIBLE_TARGET.toLocaleString("en")}`]:
    results.contract.model_visible_bytes.with <= MODEL_VISIBLE_TARGET,
  [`audit trail and tracing (0% sampled) within ${TELEMETRY_TARGET}x of off (p50)`]:
    results.telemetry_overhead.audit_traced_0.vs_off.p50 <= TELEMETRY_TARGET,
};
print(results);
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
    for (const path of ["direct", "floor", "ours", "bridge"]) lines.push(row(path, t[path]));
    lines.push(
      `  ours/floor p50 ${t.ratios.ours_vs_floor_p50}, p99 ${t.ratios.ours_vs_floor_p99}; ours/bridge p50 ${t.ratios.ours_vs_bridge_p50}; ours/direct p50 ${t.ratios.ours_vs_direct_p50}`,
    );
  }
  const c = r.concurrency;
  lines.push(
    `concurrency, ${c.callers} callers for ${c.seconds} s: ours ${c.ours_stdio.calls_per_s}/s (p99 ${c.ours_stdio.p99} ms), direct ${c.direct.calls_per_s}/s (p99 ${c.direct.p99} ms), ratio ${c.throughput_ratio}`,
  );
  const t = r.token_exchanges;
  lines.push(
    `token exchanges: ${t.exchanges} for ${t.our_calls} calls over ${t.run_seconds} s with 60 s bearers = ${t.per_1000_calls} per 1,000 calls`,
  );
  const k = r.cold_start_ms;
  lines.push(
    `cold start (median): ours ${k.ours_bundle} ms bundled (${k.ours_dist} ms from dist/ and node_modules), bridge ${k.bridge} ms; ratios ${k.ratio_bundle} / ${k.ratio_dist}`,
  );
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
    `  cold start (median): ${w.cold_start_ms.bundle.with} ms bundled (${w.cold_start_ms.dist.with} ms from dist/) with, ${w.cold_start_ms.bundle.without} ms (${w.cold_start_ms.dist.without} ms) without; ratios ${w.cold_start_ms.bundle.ratio} / ${w.cold_start_ms.dist.ratio}`,
  );
  lines.push(
    `50-item list_operations result: ours ${x.list_operations_50_bytes.ours} B, bridge ${x.list_operations_50_bytes.bridge} B, raw API page ${x.list_operations_50_bytes.raw_api_page} B`,
  );
  lines.push(printTelemetry(r.telemetry_overhead));
  lines.push("top frames (self time) of our server on the hot path:");
  for (const f of r.profile_top_frames.slice(0, 10))
    lines.push(`  ${String(f.self_pct).padStart(5)}%  ${f.ours ? "*" : " "} ${f.frame}`);
  lines.push("targets:");
  for (const [target, met] of Object.entries(r.targets))
    lines.push(`  ${met ? "met   " : "MISSED"} ${target}`);
  console.log(lines.join("\n"));
}
