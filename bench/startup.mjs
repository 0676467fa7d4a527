#!/usr/bin/env node
// Prints the size of tools/list in bytes and the median time from spawn to the `initialize`
// answer over stdio (the embedded sandbox is started in-process, as with --sandbox).
// Usage: npm run bench:startup [-- --runs 20]
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { spawnChild } from "../scripts/lib/children.mjs";
import { initializeRequest } from "../scripts/lib/protocol.mjs";
import { cleanEnv } from "../scripts/lib/spawn.mjs";

const { values } = parseArgs({ options: { runs: { type: "string", default: "20" } } });
const runs = Number(values.runs);
const cli = new URL("../dist/cli.js", import.meta.url).pathname;
const env = cleanEnv();

function once({ listTools }) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawnChild(process.execPath, [cli, "--sandbox"], {
      env: { ...env, PORTFOLIO_LOG_LEVEL: "warn" },
      stdio: ["pipe", "pipe", "ignore"],
    });
    const result = {};
    const send = (m) => child.stdin.write(`${JSON.stringify(m)}\n`);
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line);
      if (message.id === 1) {
        result.initializeMs = Number(process.hrtime.bigint() - started) / 1e6;
        if (!listTools) return child.kill();
        send({ jsonrpc: "2.0", method: "notifications/initialized" });
        send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
      } else if (message.id === 2) {
        result.toolsListBytes = Buffer.byteLength(JSON.stringify(message.result));
        result.tools = message.result.tools.length;
        child.kill();
      }
    });
    child.on("exit", () => resolve(result));
    child.on("error", reject);
    send(initializeRequest("bench"));
  });
}

const listing = await once({ listTools: true });
const times = [];
for (let i = 0; i < runs; i++) times.push((await once({ listTools: false })).initializeMs);
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(`tools/list: ${listing.tools} tools, ${listing.toolsListBytes} bytes`);
console.log(
  `spawn to initialize answer (stdio, --sandbox): median ${median.toFixed(0)} ms over ${runs} runs (min ${times[0].toFixed(0)}, max ${times.at(-1).toFixed(0)})`,
);

// Clients that probe the protocol era with `server/discover` give up after a short timeout and
// fall back to 2025-11-25 (the Vercel AI SDK waits 1 s): 50 connects in a row, as the MCP SDK's
// own client in `auto` mode with a 1 s probe, each spawning `--sandbox` (the probe runs on a
// sibling process, so every connect starts two), all must land on 2026-07-28.
const { Client } = await import("@modelcontextprotocol/client");
const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
const CONNECTS = 50;
const landed = {};
const connectMs = [];
for (let i = 0; i < CONNECTS; i++) {
  const client = new Client(
    { name: "bench-discover", version: "1.0.0" },
    { versionNegotiation: { mode: "auto", probe: { timeoutMs: 1000 } } },
  );
  const started = performance.now();
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cli, "--sandbox"],
      env: { ...env, PORTFOLIO_LOG_LEVEL: "error" },
    }),
  );
  connectMs.push(performance.now() - started);
  const version = client.getNegotiatedProtocolVersion() ?? "none";
  landed[version] = (landed[version] ?? 0) + 1;
  await client.close();
}
connectMs.sort((a, b) => a - b);
console.log(
  `${CONNECTS} stdio connects, probe timeout 1 s: ${Object.entries(landed)
    .map(([version, n]) => `${n} on ${version}`)
    .join(
      ", ",
    )}; connect median ${connectMs[CONNECTS / 2].toFixed(0)} ms, max ${connectMs.at(-1).toFixed(0)} ms`,
);
process.exitCode = (landed["2026-07-28"] ?? 0) === CONNECTS ? 0 : 1;
