#!/usr/bin/env node
// npm run load: the shared HTTP deployment under load, on loopback only, bounded in time.
// Prints the figures and writes build/load.json (or --out; --update-reference also rewrites
// the committed bench/load.json, the README's reference figures).
//
//   1. 100 sessions at once (two users from a clients file), 20 tool calls each against the
//      sandbox: throughput, latency, errors and the server's RSS.
//   2. 5,000 sessions created and closed, 100 at a time: the server's RSS and V8 heap before
//      and after, each measured after a full GC, and the sessions still open (must be 0).
//
// The sandbox runs in its own process with its rate limiter off, and the server's per-client
// limits (MCP requests, share of the API key's rate) are raised: this measures the server, not
// the quotas (tests and npm run bench:fair-share cover them).
// The server runs with --inspect on loopback only so that the script can ask for a full GC
// before reading memory; nothing else goes through the inspector.
//
// With --fleet (writes build/load-fleet.json): the same calls through 1 replica and through 3
// replicas sharing one Redis (--redis URL, default the local one; a fresh key prefix, deleted
// at the end), sessions dealt round the replicas, side by side with 1 replica without Redis.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { DEMO_KEYS, DEMO_USERS } from "@portfolio-mcp/sandbox";
import { WebSocket } from "undici";
import { sha256Hex } from "../dist/transport/clients.js";
import { stopAndExit, stopChild } from "../scripts/lib/children.mjs";
import { DEFAULT_REDIS_URL, QUOTAS_RAISED } from "./lib/fleet.mjs";
import { runLoadFleet } from "./lib/load-fleet.mjs";
import { readMix } from "./lib/load-mix.mjs";
import { sandboxProcess, spawnUntil } from "./lib/processes.mjs";
import { RESULT_OPTIONS, writeResults } from "./lib/results.mjs";
import { percentile, round } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: {
    ...RESULT_OPTIONS,
    fleet: { type: "boolean", default: false },
    redis: { type: "string", default: DEFAULT_REDIS_URL },
  },
});

const SESSIONS = 100;
const CALLS_PER_SESSION = 20;
const CHURN_SESSIONS = 5_000;
const CHURN_WAVE = 100;
const TIME_LIMIT_MS = 10 * 60_000;

const root = new URL("..", import.meta.url).pathname;
const log = (line) => process.stderr.write(`${line}\n`);
setTimeout(
  () => stopAndExit(1, `load: gave up after ${TIME_LIMIT_MS / 60_000} min`),
  TIME_LIMIT_MS,
).unref();

if (options.fleet) await runLoadFleet(options, log);
else await single();

/** The single server: 100 sessions of calls, then 5,000 sessions opened and closed. */
async function single() {
  // --- the sandbox and the server -------------------------------------------------------------

  const sandbox = await sandboxProcess({ rateLimit: false, requestLogLimit: 100 });
  const users = [
    { name: "camille", token: "load-camille-token-0123456789", id: DEMO_USERS.camille },
    { name: "julien", token: "load-julien-token-0123456789", id: DEMO_USERS.julien },
  ];
  const state = join(root, "build", "load");
  rmSync(state, { recursive: true, force: true });
  mkdirSync(state, { recursive: true, mode: 0o700 });
  const clientsFile = join(state, "clients.json");
  writeFileSync(
    clientsFile,
    JSON.stringify({
      clients: users.map((u) => ({
        name: u.name,
        token_sha256: sha256Hex(u.token),
        delegated_user: { id: u.id },
      })),
    }),
  );
  const server = await spawnUntil(
    process.execPath,
    ["--inspect=127.0.0.1:0", join(root, "dist", "cli.js"), "serve", "--http", "--port", "0"],
    {
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: DEMO_KEYS.full.keyId,
      PORTFOLIO_API_SECRET: DEMO_KEYS.full.secret,
      PORTFOLIO_MCP_CLIENTS_FILE: clientsFile,
      ...QUOTAS_RAISED,
      // 100 sessions at once from two clients: the per-client quota must allow them.
      PORTFOLIO_MCP_MAX_SESSIONS_PER_CLIENT: "200",
      PORTFOLIO_STATE_DIR: state,
      PORTFOLIO_LOG_LEVEL: "warn",
    },
    /URL\s+(http:\/\/127\.0\.0\.1:\d+)\/mcp/,
  );
  const base = server.match[1];
  const inspectorUrl = /ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/.exec(server.stderr)[0];

  /** The server's own figures, from GET /metrics. */
  async function serverFigures() {
    const text = await (await fetch(`${base}/metrics`)).text();
    const read = (name) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
    return {
      rss: read("process_resident_memory_bytes"),
      heap: read("nodejs_heap_used_bytes"),
      sessions: read("portfolio_mcp_sessions_open"),
      cpuSeconds: read("process_cpu_seconds_total"),
    };
  }

  /** A full GC in the server (through its loopback inspector), then its figures. */
  async function settledFigures() {
    const socket = new WebSocket(inspectorUrl);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    for (let id = 1; id <= 2; id++) {
      const done = new Promise((resolve) => {
        socket.onmessage = (event) => JSON.parse(event.data).id === id && resolve();
      });
      socket.send(JSON.stringify({ id, method: "HeapProfiler.collectGarbage" }));
      await done;
    }
    socket.close();
    return serverFigures();
  }

  /** Samples the server's RSS every 250 ms while `work` runs; returns work's result and the peak. */
  async function withPeakRss(work) {
    let peak = 0;
    let running = true;
    const sampler = (async () => {
      while (running) {
        peak = Math.max(peak, (await serverFigures()).rss);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      return { result: await work(), peak };
    } finally {
      running = false;
      await sampler;
    }
  }

  async function connect(user) {
    const client = new Client({ name: "load", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${user.token}` } },
    });
    await client.connect(transport);
    return {
      client,
      async close() {
        await transport.terminateSession();
        await client.close();
      },
    };
  }

  // --- 1. 100 sessions, 20 calls each -----------------------------------------------------------

  const probe = await connect(users[0]);
  const CALLS = await readMix(probe.client);
  await probe.close();

  log(`load: ${SESSIONS} sessions x ${CALLS_PER_SESSION} calls ...`);
  const latencies = [];
  const connectLatencies = [];
  const errors = [];
  const callsBefore = await settledFigures();
  const started = performance.now();
  const { peak: callsPeak } = await withPeakRss(() =>
    Promise.all(
      Array.from({ length: SESSIONS }, async (_, i) => {
        const connectStarted = performance.now();
        const session = await connect(users[i % users.length]);
        connectLatencies.push(performance.now() - connectStarted);
        for (let call = 0; call < CALLS_PER_SESSION; call++) {
          const [name, args] = CALLS[(call + i) % CALLS.length];
          const callStarted = performance.now();
          try {
            const reply = await session.client.callTool({ name, arguments: args });
            if (reply.isError) errors.push(`${name}: ${reply.content[0]?.text}`);
          } catch (error) {
            errors.push(`${name}: ${error.message}`);
          }
          latencies.push(performance.now() - callStarted);
        }
        await session.close();
      }),
    ),
  );
  const elapsedSeconds = (performance.now() - started) / 1000;
  const afterCalls = await serverFigures();

  // --- 2. 5,000 sessions created and closed ---------------------------------------------------

  log(`load: ${CHURN_SESSIONS} sessions created and closed, ${CHURN_WAVE} at a time ...`);
  const churnBefore = await settledFigures();
  const churnStarted = performance.now();
  const { peak: churnPeak } = await withPeakRss(async () => {
    for (let done = 0; done < CHURN_SESSIONS; done += CHURN_WAVE) {
      await Promise.all(
        Array.from({ length: CHURN_WAVE }, async (_, i) => {
          try {
            await (await connect(users[i % users.length])).close();
          } catch (error) {
            errors.push(`session ${done + i}: ${error.message}`);
          }
        }),
      );
    }
  });
  const churnSeconds = (performance.now() - churnStarted) / 1000;
  const churnAfter = await settledFigures();

  await stopChild(server.child);
  await sandbox.close();

  // --- report ---------------------------------------------------------------------------------

  const ms = (samples, p) => round(percentile(samples, p), 1);
  const MiB = (bytes) => round(bytes / 2 ** 20, 1);
  const report = {
    cores: os.availableParallelism(),
    calls: {
      sessions: SESSIONS,
      calls: latencies.length,
      seconds: round(elapsedSeconds, 2),
      calls_per_s: Math.round(latencies.length / elapsedSeconds),
      call_ms: { p50: ms(latencies, 50), p99: ms(latencies, 99), max: ms(latencies, 100) },
      connect_ms: { p50: ms(connectLatencies, 50), p99: ms(connectLatencies, 99) },
      server_cpu_ms_per_call: round(
        ((afterCalls.cpuSeconds - callsBefore.cpuSeconds) * 1000) / latencies.length,
        2,
      ),
      errors: errors.length,
      rss_mib: { before: MiB(callsBefore.rss), peak: MiB(callsPeak), after: MiB(afterCalls.rss) },
    },
    churn: {
      sessions: CHURN_SESSIONS,
      seconds: round(churnSeconds, 1),
      sessions_per_s: Math.round(CHURN_SESSIONS / churnSeconds),
      rss_mib: { before: MiB(churnBefore.rss), peak: MiB(churnPeak), after: MiB(churnAfter.rss) },
      heap_mib: { before: MiB(churnBefore.heap), after: MiB(churnAfter.heap) },
      sessions_open_after: churnAfter.sessions,
    },
  };
  const { calls, churn } = report;
  const lines = [
    `${calls.sessions} concurrent sessions x ${CALLS_PER_SESSION} tool calls (loopback, sandbox upstream, ${report.cores} cores shared by all three processes)`,
    `  calls           ${calls.calls} in ${calls.seconds} s = ${calls.calls_per_s} calls/s`,
    `  call latency    p50 ${calls.call_ms.p50} ms, p99 ${calls.call_ms.p99} ms, max ${calls.call_ms.max} ms`,
    `  connect         p50 ${calls.connect_ms.p50} ms, p99 ${calls.connect_ms.p99} ms`,
    `  server CPU      ${calls.server_cpu_ms_per_call} ms per call (connects included)`,
    `  errors          ${calls.errors}`,
    `  server RSS      ${calls.rss_mib.before} MiB before, ${calls.rss_mib.peak} MiB peak, ${calls.rss_mib.after} MiB after`,
    `${churn.sessions} sessions created and closed (${CHURN_WAVE} at a time) in ${churn.seconds} s = ${churn.sessions_per_s} sessions/s`,
    `  server RSS      ${churn.rss_mib.before} MiB before, ${churn.rss_mib.peak} MiB peak, ${churn.rss_mib.after} MiB after (after full GC)`,
    `  V8 heap used    ${churn.heap_mib.before} MiB before, ${churn.heap_mib.after} MiB after (after full GC)`,
    `  sessions open   ${churn.sessions_open_after} after`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  writeResults(report, options, { fresh: "build/load.json", reference: "bench/load.json" });
  for (const error of errors.slice(0, 10)) log(`  error: ${error}`);
  process.exitCode = errors.length === 0 && churn.sessions_open_after === 0 ? 0 : 1;
}
