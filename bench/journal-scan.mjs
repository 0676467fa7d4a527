#!/usr/bin/env node
// What one replica's periodic look for abandoned deliveries costs on a Redis journal holding
// many intents: Redis commands and milliseconds per look, on a private redis-server (so that
// its command counter sees nobody else's). Writes build/journal-scan.json (or --out).
//   node bench/journal-scan.mjs [-- INTENTS]
import { parseArgs } from "node:util";
import { connectRedis } from "../dist/state/redis.js";
import { WriteGate } from "../dist/writes/gate.js";
import { RedisJournal } from "../dist/writes/redis-journal.js";
import { stopChildren } from "../scripts/lib/children.mjs";
import { privateRedis } from "./lib/redis-server.mjs";
import { RESULT_OPTIONS, writeResults } from "./lib/results.mjs";
import { round } from "./lib/stats.mjs";

const { values: options, positionals } = parseArgs({
  options: RESULT_OPTIONS,
  allowPositionals: true,
});
const INTENTS = Number(positionals[0] ?? 5_000);
const LIVE = 10; // confirmed writes another replica is sending right now (live leases)
const LOOKS = 20;
const upstream = { baseUrl: "http://127.0.0.1:9/v1", keyId: "scan" };

const server = await privateRedis();
try {
  const redis = await connectRedis({ url: server.url, prefix: "scan:" });
  const store = new RedisJournal(redis);
  const now = Date.now();
  const iso = (ms) => new Date(ms).toISOString();
  // Half finished (kept a week), half drafts awaiting confirmation, and a few being sent.
  for (let n = 0; n < INTENTS; n++) {
    const state = n < LIVE ? "sending" : n % 2 ? "succeeded" : "pending";
    const id = `cf_scan${String(n).padStart(8, "0")}`;
    const intent = {
      id,
      confirmationId: `Scan [${id}]`,
      operation: "custom_dashboard_create",
      path: {},
      body: { name: `scan ${n}` },
      delegatedUser: null,
      caller: { sessionId: "scan", client: "scan" },
      upstream,
      idempotencyKey: `pmcp-scan-${n}`,
      digest: "d",
      preview: { action: "a", target: "t", recorded_as: "r", fields: {}, billable: false },
      state,
      createdAt: iso(now),
      expiresAt: iso(now + 3_600_000),
      confirmedAt: state === "pending" ? null : iso(now),
      updatedAt: iso(now),
      attempts: state === "pending" ? 0 : 1,
      result: null,
      error: null,
    };
    const stored = await store.replace(intent, 0);
    if (state === "sending")
      await store.replace({ ...intent, state }, stored.revision, {
        owner: "another-replica",
        ms: 600_000,
      });
  }
  const logger = { info() {}, warn() {}, error() {}, debug() {} };
  const gate = await WriteGate.open({
    store,
    api: { settings: upstream },
    logger,
    ttlMs: 3_600_000,
    maxPendingPerUser: INTENTS,
  });
  const commands = async () => {
    const info = await redis.client.info("stats");
    return Number(/total_commands_processed:(\d+)/.exec(info)[1]);
  };
  const before = await commands();
  const started = performance.now();
  for (let n = 0; n < LOOKS; n++) await gate.recoverAbandoned();
  const ms = (performance.now() - started) / LOOKS;
  // Each INFO counts itself once.
  const perLook = ((await commands()) - before - 1) / LOOKS;
  gate.close();
  await redis.close();
  const report = {
    intents: INTENTS,
    live_deliveries: LIVE,
    redis_commands_per_look: round(perLook, 1),
    ms_per_look: round(ms, 2),
    looks_per_minute_per_replica: 12,
  };
  console.log(
    `${INTENTS} stored intents (${LIVE} being sent): ${report.redis_commands_per_look} Redis commands and ${report.ms_per_look} ms per look for abandoned deliveries (every 5 s on each replica)`,
  );
  writeResults(report, options, {
    fresh: "build/journal-scan.json",
    reference: "bench/journal-scan.json",
  });
} finally {
  await server.stop();
  await stopChildren();
}
