#!/usr/bin/env node
// npm run chaos: 500 confirmed writes under faults. Prints the report; writes build/chaos.json
// (or --out; --update-reference also rewrites the committed bench/chaos.json, the README's
// reference figures). The sandbox and the server run in this process: nothing to stop after.
//   npm run chaos [-- WRITES] [--out FILE] [--update-reference]
import { parseArgs } from "node:util";
import { runChaos } from "./lib/chaos.mjs";
import { RESULT_OPTIONS, writeResults } from "./lib/results.mjs";

const { values: options, positionals } = parseArgs({
  options: RESULT_OPTIONS,
  allowPositionals: true,
});
const report = await runChaos({ writes: Number(positionals[0] ?? 500) });
const rows = [
  ["writes requested", report.writes_requested],
  ["writes confirmed", report.confirmed],
  ["records in the sandbox", report.records],
  ["duplicates (must be 0)", report.duplicates],
  ["lost confirmed writes (must be 0)", report.lost_confirmed_writes],
  ["refused definitively", report.failed],
  ["unfinished", report.unfinished],
  ["token exchanges", report.token_exchanges],
  ["client retries", report.client_retries],
  ["confirm_write repeats (uncertain)", report.confirm_retries],
  ["draft repeats (read failed)", report.draft_retries],
  ["injected 500/503", report.injected.failed_500_503],
  ["injected drops after apply", report.injected.dropped_after_apply],
  ["injected 429", report.injected.rate_limited_429],
  ["401 after bearer expiry", report.injected.refused_401],
  ["seconds", report.seconds],
];
console.log(rows.map(([label, value]) => `${String(label).padEnd(36)} ${value}`).join("\n"));
writeResults(report, options, { fresh: "build/chaos.json", reference: "bench/chaos.json" });
process.exitCode = report.duplicates === 0 && report.lost_confirmed_writes === 0 ? 0 : 1;
