#!/usr/bin/env node
// npm run chaos: 500 confirmed writes under faults, a quarter each of operation notes and
// dashboards (curated tools), tasks and manual calendar events (the long tail: draft_api_write
// on the key's contract). Prints the report; writes build/chaos.json (or --out;
// --update-reference also rewrites the committed bench/chaos.json, the README's reference
// figures). The sandbox and the server run in this process: nothing to stop after.
//   npm run chaos [-- WRITES] [--out FILE] [--update-reference]
//
// With --fleet: three `serve --http` replicas on one Redis (--redis URL, default the local
// one; a fresh key prefix, deleted at the end) and one sandbox, 300 writes by default, each
// drafted on one replica and confirmed on another, one replica SIGKILLed mid-run and started
// again, and forged intents (without the fleet's secret) written into Redis mid-run: none may be
// delivered. Writes build/chaos-fleet.json (--update-reference: bench/chaos-fleet.json too).
//   npm run chaos -- --fleet [WRITES] [--redis URL] [--out FILE] [--update-reference]
import { parseArgs } from "node:util";
import { stopAndExit } from "../scripts/lib/children.mjs";
import { runChaos } from "./lib/chaos.mjs";
import { runChaosFleet } from "./lib/chaos-fleet.mjs";
import { DEFAULT_REDIS_URL } from "./lib/fleet.mjs";
import { RESULT_OPTIONS, writeResults } from "./lib/results.mjs";

const { values: options, positionals } = parseArgs({
  options: {
    ...RESULT_OPTIONS,
    fleet: { type: "boolean", default: false },
    redis: { type: "string", default: DEFAULT_REDIS_URL },
  },
  allowPositionals: true,
});
if (options.fleet) await fleet();
else await single();

async function fleet() {
  setTimeout(() => stopAndExit(1, "chaos --fleet: gave up after 10 min"), 600_000).unref();
  const report = await runChaosFleet({
    writes: Number(positionals[0] ?? 300),
    redisUrl: options.redis,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const rows = [
    ["replicas (one Redis, one sandbox)", report.replicas],
    ["writes requested", report.writes_requested],
    ["writes confirmed", report.confirmed],
    ["  confirmed on another replica than drafted", report.confirmed_on_another_replica],
    ["records in the sandbox", report.records],
    ["duplicates (must be 0)", report.duplicates],
    ["lost confirmed writes (must be 0)", report.lost_confirmed_writes],
    ["requests that reached the write routes", report.write_requests_sent],
    ["sent under 2+ Idempotency-Keys (must be 0)", report.sent_under_several_idempotency_keys],
    ["replicas SIGKILLed / started again", `${report.killed} / ${report.restarted}`],
    ["forged intents written into Redis mid-run", report.forged_injected],
    ["  delivered (must be 0)", report.forged_delivered],
    ["  quarantined", report.forged_quarantined],
    ["calls moved to another replica", report.calls_failed_over],
    ["refused definitively", report.failed],
    ["unfinished", report.unfinished],
    ["token exchanges (whole fleet)", report.token_exchanges],
    ["confirm_write repeats", report.confirm_retries],
    ["draft repeats", report.draft_retries],
    ["injected 500/503", report.injected.failed_500_503],
    ["injected drops after apply", report.injected.dropped_after_apply],
    ["injected 429", report.injected.rate_limited_429],
    ["401 after bearer expiry", report.injected.refused_401],
    ["Redis keys deleted at the end", report.redis_keys_deleted],
    ["seconds", report.seconds],
  ];
  console.log(rows.map(([label, value]) => `${label.padEnd(46)} ${value}`).join("\n"));
  writeResults(report, options, {
    fresh: "build/chaos-fleet.json",
    reference: "bench/chaos-fleet.json",
  });
  const exactlyOnce =
    report.duplicates === 0 &&
    report.lost_confirmed_writes === 0 &&
    report.sent_under_several_idempotency_keys === 0 &&
    report.unfinished === 0 &&
    report.forged_delivered === 0;
  process.exitCode = exactlyOnce ? 0 : 1;
}

async function single() {
  const report = await runChaos({ writes: Number(positionals[0] ?? 500) });
  const rows = [
    ["writes requested", report.writes_requested],
    ["writes confirmed", report.confirmed],
    ["records in the sandbox", report.records],
    ["duplicates (must be 0)", report.duplicates],
    ["lost confirmed writes (must be 0)", report.lost_confirmed_writes],
    ...classRows("curated", report.curated),
    ...classRows("long-tail", report.long_tail),
    ["  requests sent to their routes", report.long_tail.requests_sent],
    [
      "  sent under 2+ Idempotency-Keys (must be 0)",
      report.long_tail.sent_under_several_idempotency_keys,
    ],
    [
      "  sent under 2+ client_request_ids (must be 0)",
      report.long_tail.sent_under_several_client_request_ids,
    ],
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
  console.log(
    rows
      .map(([label, value]) => (value === undefined ? label : `${label.padEnd(46)} ${value}`))
      .join("\n"),
  );
  writeResults(report, options, { fresh: "build/chaos.json", reference: "bench/chaos.json" });
  // The totals include the long tail; its one-key-per-intent figures are checked on their own.
  const exactlyOnce =
    report.duplicates === 0 &&
    report.lost_confirmed_writes === 0 &&
    report.long_tail.sent_under_several_idempotency_keys === 0 &&
    report.long_tail.sent_under_several_client_request_ids === 0;
  process.exitCode = exactlyOnce ? 0 : 1;
}

/** One class of writes: the operations it drafts, then its figures indented under them. */
function classRows(label, c) {
  return [
    [`${label} (${c.operations.join(", ")})`],
    ["  confirmed / requested", `${c.confirmed} / ${c.requested}`],
    ["  records in the sandbox", c.records],
    ["  duplicates (must be 0)", c.duplicates],
    ["  lost confirmed writes (must be 0)", c.lost_confirmed_writes],
  ];
}
