#!/usr/bin/env node
// One peer floods the HTTP server with idle sockets while another makes ordinary calls: the
// figures are what the flooding peer keeps open and how the other peer's calls fare. 127.0.0.2
// opens --sockets idle sockets (2,050 by default, over the server's 2,000) and reopens each one
// the server closes, 50 ms later, for --seconds (12 by default: past the 10 s headers timeout);
// 127.0.0.1 meanwhile opens a session, lists deals and closes it, one call after the other,
// through the SDK's client. The sandbox runs in its own process.
//   npm run build && node bench/socket-flood.mjs [-- --cli path/to/dist/cli.js]
// --cli measures another build (say, main's). Figures are printed and written to
// build/bench/socket-flood.json (or --out).
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { spawnChild, stopChildren } from "../scripts/lib/children.mjs";
import { httpClient, sandboxProcess, spawnUntil } from "./lib/processes.mjs";
import { RESULT_OPTIONS, writeResults } from "./lib/results.mjs";
import { percentile, round } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: {
    ...RESULT_OPTIONS,
    cli: { type: "string", default: new URL("../dist/cli.js", import.meta.url).pathname },
    sockets: { type: "string", default: "2050" },
    seconds: { type: "string", default: "12" },
  },
});
const SOCKETS = Number(options.sockets);
const SECONDS = Number(options.seconds);
const log = (line) => process.stderr.write(`${line}\n`);

const sandbox = await sandboxProcess({ rateLimit: false });
const token = randomBytes(24).toString("base64url");
const server = await spawnUntil(
  process.execPath,
  [options.cli, "serve", "--http", "--port", "0"],
  {
    PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
    PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
    PORTFOLIO_API_SECRET: sandbox.credentials.secret,
    PORTFOLIO_MCP_TOKEN: token,
    PORTFOLIO_MCP_RATE_LIMIT_PER_MINUTE: "1000000",
    PORTFOLIO_LOG_LEVEL: "error",
  },
  /URL\s+(http:\/\/\S+)/,
);
const url = new URL(server.match[1]);

// The flooding peer, in its own process (its reconnections must not slow the other peer's
// event loop here): idle sockets, each reopened 50 ms after the server closes it. It answers
// "count" on stdin with the sockets it holds and the closes it has seen.
const FLOODER = `
import { connect } from "node:net";
import { createInterface } from "node:readline";
const [host, port, count] = process.argv.slice(1);
let open = 0;
let closed = 0;
let flooding = true;
const held = new Set();
function openOne() {
  if (!flooding) return;
  const socket = connect({ host, port: Number(port), localAddress: "127.0.0.2" });
  let connected = false;
  held.add(socket);
  socket.on("connect", () => { connected = true; open++; });
  socket.on("error", () => {});
  socket.on("close", () => {
    held.delete(socket);
    if (connected) open--;
    if (!flooding) return;
    closed++;
    setTimeout(openOne, 50);
  });
}
for (let i = 0; i < Number(count); i++) openOne();
createInterface({ input: process.stdin }).on("line", () => {
  process.stdout.write(JSON.stringify({ open, closed }) + "\\n");
});
process.stdin.on("end", () => { flooding = false; for (const s of held) s.destroy(); process.exit(0); });
`;
const flooder = spawnChild(
  process.execPath,
  ["--input-type=module", "-e", FLOODER, url.hostname, url.port, String(SOCKETS)],
  { stdio: ["pipe", "pipe", "inherit"] },
);
const counts = createInterface({ input: flooder.stdout });
const count = async () => {
  flooder.stdin.write("count\n");
  const [line] = await once(counts, "line");
  return JSON.parse(line);
};
await new Promise((resolve) => setTimeout(resolve, 1_000));
const heldAfterOneSecond = (await count()).open;
// What the server itself counts open (a build without the gauge: null).
const metrics = await fetch(new URL("/metrics", url)).then((r) => r.text());
const serverOpen = Number(
  /^portfolio_mcp_connections_open (\d+)/m.exec(metrics)?.[1] ?? Number.NaN,
);
log(`127.0.0.2 holds ${heldAfterOneSecond} idle sockets; 127.0.0.1 calls for ${SECONDS} s`);

// The other peer: sessions and calls, one after the other.
const durations = [];
const failures = [];
const until = Date.now() + SECONDS * 1_000;
while (Date.now() < until) {
  const started = performance.now();
  try {
    const client = await httpClient(url.href, { Authorization: `Bearer ${token}` });
    const reply = await client.callTool({ name: "list_deals", arguments: { limit: 1 } });
    await client.close();
    if (reply.isError) throw new Error(reply.content[0]?.text);
    durations.push(performance.now() - started);
  } catch (error) {
    failures.push(error.cause?.code ?? error.code ?? error.message);
  }
}
const attacker = await count();
flooder.stdin.end();
await once(flooder, "exit");
await stopChildren([server.child.pid]);
await sandbox.close();
await stopChildren();

const report = {
  cli: options.cli,
  attacker: {
    sockets: SOCKETS,
    heldAfterOneSecond,
    serverCountsOpen: Number.isNaN(serverOpen) ? null : serverOpen,
    closedByServer: attacker.closed,
  },
  otherPeer: {
    calls: durations.length + failures.length,
    succeeded: durations.length,
    failed: failures.length,
    failures: [...new Set(failures)].slice(0, 5),
    p50Ms: durations.length ? round(percentile(durations, 50), 1) : null,
    p99Ms: durations.length ? round(percentile(durations, 99), 1) : null,
    maxMs: durations.length ? round(Math.max(...durations), 1) : null,
  },
};
console.log(`server: ${options.cli}`);
console.log(
  `127.0.0.2: ${SOCKETS} idle sockets asked, ${heldAfterOneSecond} held after 1 s as it counts${Number.isNaN(serverOpen) ? "" : ` (the server counts ${serverOpen} open)`}; ${attacker.closed} closed by the server during the run (each reopened 50 ms later)`,
);
const o = report.otherPeer;
console.log(
  `127.0.0.1: ${o.calls} session+call cycles in ${SECONDS} s, ${o.succeeded} succeeded, ${o.failed} failed${o.failed ? ` (${o.failures.join(", ")})` : ""}; p50 ${o.p50Ms} ms, p99 ${o.p99Ms} ms, max ${o.maxMs} ms`,
);
writeResults(report, options, {
  fresh: "build/bench/socket-flood.json",
  reference: "build/bench/socket-flood.json",
});
