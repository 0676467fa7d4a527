#!/usr/bin/env node
// What an upstream answer larger than PORTFOLIO_MAX_RESPONSE_BYTES costs the server: the
// sandbox (its own process) answers one list_deals call with a 150 MB body, with Content-Length
// and chunked; the figure is the server process's peak resident memory during that call (Linux
// VmHWM, reset just before it), with the call's outcome and time. The server is measured over
// stdio, as Claude Desktop runs it.
//   npm run build && node bench/large-answer.mjs [-- --cli path/to/dist/cli.js] [--bytes N]
// --cli measures another build (say, main's) against the same sandbox. Figures are printed and
// written to build/bench/large-answer.json (or --out).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { stopChildren } from "../scripts/lib/children.mjs";
import { sandboxProcess, stdioClient } from "./lib/processes.mjs";
import { RESULT_OPTIONS, writeResults } from "./lib/results.mjs";

const { values: options } = parseArgs({
  options: {
    ...RESULT_OPTIONS,
    cli: { type: "string", default: new URL("../dist/cli.js", import.meta.url).pathname },
    bytes: { type: "string", default: String(150_000_000) },
  },
});
const bytes = Number(options.bytes);
const MiB = 1024 * 1024;

/** A field of /proc/<pid>/status, in MiB (VmRSS, VmHWM). */
const memory = (pid, field) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  return Math.round((Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) / 1024) * 10) / 10;
};

const sandbox = await sandboxProcess({ rateLimit: false });
const results = [];
try {
  for (const declareLength of [true, false]) {
    const client = await stdioClient(process.execPath, [options.cli], {
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
      PORTFOLIO_API_SECRET: sandbox.credentials.secret,
      PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "large-answer-")),
      PORTFOLIO_LOG_LEVEL: "warn",
    });
    const pid = client.transport.pid;
    try {
      // Warm: the first call loads undici and signs in; its memory is not the answer's.
      await client.callTool({ name: "list_deals", arguments: { limit: 5 } });
      const before = memory(pid, "VmRSS");
      writeFileSync(`/proc/${pid}/clear_refs`, "5"); // VmHWM starts again from here
      await sandbox.fault({
        count: 1,
        match: { routeId: "deals_list" },
        action: { type: "large_answer", bytes, declareLength },
      });
      const started = performance.now();
      const reply = await client.callTool({ name: "list_deals", arguments: { limit: 5 } });
      const ms = Math.round(performance.now() - started);
      const peak = memory(pid, "VmHWM");
      const after = await client.callTool({ name: "list_deals", arguments: { limit: 5 } });
      results.push({
        answer: declareLength ? "Content-Length" : "chunked",
        answerBytes: bytes,
        rssBeforeMiB: before,
        peakRssMiB: peak,
        ms,
        outcome: reply.isError ? `refused: ${reply.content[0]?.text}` : "read whole",
        nextCallOk: !after.isError,
      });
    } finally {
      await client.close();
    }
  }
} finally {
  await sandbox.close();
  await stopChildren();
}

console.log(`server: ${options.cli}; answer: ${bytes} bytes (${(bytes / MiB).toFixed(0)} MiB)`);
for (const r of results)
  console.log(
    `${r.answer.padEnd(15)} RSS before ${String(r.rssBeforeMiB).padStart(6)} MiB, peak ${String(r.peakRssMiB).padStart(6)} MiB, ${String(r.ms).padStart(5)} ms, next call ${r.nextCallOk ? "ok" : "FAILED"}: ${r.outcome.slice(0, 160)}`,
  );
writeResults({ cli: options.cli, results }, options, {
  fresh: "build/bench/large-answer.json",
  reference: "build/bench/large-answer.json",
});
