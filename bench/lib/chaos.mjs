// The fault-injection run: confirmed writes through the real MCP server and gate while the
// sandbox fails, drops, rate-limits and expires bearers. Shared by `npm run chaos` and the
// test suite's short variant. The server runs on the key's contract (the sandbox's own export,
// as with --sandbox), so half the writes go through the long tail: draft_api_write on
// operations that have no curated tool, then confirm_write.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { startSandbox } from "@portfolio-mcp/sandbox";
import { connectApi } from "../../dist/api/client.js";
import { normaliseContract } from "../../dist/api/contract/load.js";
import { Directory } from "../../dist/api/directory.js";
import { resolveRoutes } from "../../dist/api/routes.js";
import { createLogger } from "../../dist/log.js";
import { createMcpServer } from "../../dist/server.js";
import { RefusedOperations } from "../../dist/toolkit/refusals.js";
import { WriteGate } from "../../dist/writes/gate.js";
import { FileJournal } from "../../dist/writes/journal.js";
import { Sealer } from "../../dist/writes/seal.js";

export async function runChaos({
  writes = 500,
  workers = 16,
  burstEveryMs = 1_500,
  expireEveryMs = 1_000,
  maxConfirms = 60,
} = {}) {
  const started = Date.now();
  const sandbox = await startSandbox({ rateLimit: false, requestLogLimit: 200_000 });
  const { control } = sandbox;
  // The key's contract, fetched before any fault is injected (startup is not under test).
  const exported = await fetch(
    new URL(`/_admin/keys/${sandbox.credentials.keyId}/contract.json`, sandbox.baseUrl),
  );
  const contract = normaliseContract(await exported.json(), "the sandbox's export");
  const stopFaults = injectFaults(control, { burstEveryMs, expireEveryMs });

  const logger = createLogger({ level: "silent" });
  const api = connectApi({
    settings: {
      baseUrl: sandbox.baseUrl,
      keyId: sandbox.credentials.keyId,
      secret: sandbox.credentials.secret,
      tokenPrefix: sandbox.credentials.tokenPrefix,
      delegationHeaderPrefix: sandbox.credentials.delegationHeaderPrefix,
      delegatedUser: { email: sandbox.credentials.delegatedUserEmail },
      routesFile: null,
      timeoutMs: 10_000,
      maxRetries: 3,
      maxRetryWaitSeconds: 30,
      // Exactly-once under faults is measured, not the client's share of the key: raised.
      rateLimitPerMinute: 1_000_000,
      sharePerClient: 1,
      maxInFlightPerClient: 1_000,
      maxResponseBytes: 20_971_520,
    },
    routes: resolveRoutes(null, contract),
    logger,
  });
  const journalDir = mkdtempSync(join(tmpdir(), "chaos-"));
  const gate = await WriteGate.open({
    store: new FileJournal(journalDir),
    api,
    logger,
    ttlMs: 3_600_000,
    maxPendingPerUser: 1_000,
  });
  const server = createMcpServer(
    {
      api,
      directory: new Directory(api),
      logger,
      exportDir: null,
      refusals: new RefusedOperations(),
      writes: { gate, mode: "two-step", sealer: await Sealer.open(journalDir, null) },
    },
    {
      sessionId: "chaos",
      delegatedUser: api.settings.delegatedUser,
      client: null,
      readOnly: false,
      allowedTools: null,
    },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "chaos", version: "1.0.0" });
  await client.connect(clientSide);

  const run = `chaos-${started}`;
  const operations = control.state.data.operations.slice(0, 20).map((o) => o.id);
  const kinds = writeKinds(operations, new Date().toISOString().slice(0, 10));
  const report = {
    writes_requested: writes,
    confirmed: 0,
    failed: 0,
    unfinished: 0,
    draft_retries: 0,
    confirm_retries: 0,
    failures: [],
  };
  const kindOf = new Map(); // marker -> the kind of write it was drafted as
  const confirmedMarkers = [];
  let next = 0;

  async function one(i) {
    const marker = `${run}-${i}`;
    const kind = kinds[i % kinds.length];
    kindOf.set(marker, kind);
    const draftCall = kind.draft(marker, i);
    let draft;
    for (let attempt = 0; attempt < 30 && !draft; attempt++) {
      const reply = await client.callTool(draftCall);
      if (reply.isError) report.draft_retries++;
      else draft = reply.structuredContent;
    }
    if (!draft) return void report.unfinished++;
    for (let attempt = 0; attempt < maxConfirms; attempt++) {
      const reply = await client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: draft.confirmation_id },
      });
      if (!reply.isError && reply.structuredContent.status === "succeeded") {
        report.confirmed++;
        confirmedMarkers.push(marker);
        return;
      }
      if (reply.isError && !gate.get(draft.confirmation_id)?.state.match(/uncertain|sending/)) {
        report.failed++; // a definitive refusal: recorded, never resent
        report.failures.push(reply.content[0]?.text);
        return;
      }
      report.confirm_retries++;
    }
    report.unfinished++;
  }

  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < writes) await one(next++);
    }),
  );
  stopFaults();
  control.clearFaults();

  const counts = recordsOfRun(control, kinds, run);
  const log = control.requests();
  // Totals over every write, then the same figures for each class, long-tail writes apart.
  const all = tally(counts, confirmedMarkers, kindOf, () => true);
  report.records = all.records;
  report.duplicates = all.duplicates;
  report.lost_confirmed_writes = all.lost_confirmed_writes;
  const curated = kinds.filter((k) => !k.longTail).map((k) => k.id);
  const longTail = kinds.filter((k) => k.longTail).map((k) => k.id);
  report.curated = {
    operations: curated,
    ...tally(counts, confirmedMarkers, kindOf, (kind) => !kind.longTail),
  };
  report.long_tail = {
    operations: longTail,
    ...tally(counts, confirmedMarkers, kindOf, (kind) => kind.longTail),
    ...deliveries(log, new Set(longTail), kindOf),
  };
  report.token_exchanges = control.stats().tokenExchanges;
  report.client_retries = api.retries;
  report.upstream_requests = control.stats().requests;
  report.injected = {
    failed_500_503: log.filter((e) => e.status === 500 || e.status === 503).length,
    dropped_after_apply: log.filter((e) => e.status === null).length,
    rate_limited_429: log.filter((e) => e.status === 429).length,
    refused_401: log.filter((e) => e.status === 401).length,
  };
  report.seconds = Math.round((Date.now() - started) / 100) / 10;

  await client.close();
  await server.close();
  gate.close();
  await api.close();
  await sandbox.close();
  rmSync(journalDir, { recursive: true, force: true });
  return report;
}

/**
 * The writes the run drafts in turn: two with curated tools, two through the long tail. Each
 * names its records by the run's marker (a note's content, a dashboard's name, a task's or a
 * manual event's title), so a write applied twice shows as two records. The calendar's API
 * dedupes on client_request_id by itself: the request log check below is what would catch a
 * draft that changed it between deliveries.
 */
export function writeKinds(operations, today) {
  const on = (i) => operations[i % operations.length];
  return [
    {
      id: "operation_note_create",
      draft: (marker, i) => ({
        name: "create_operation_note",
        arguments: { operation_id: on(i), content: marker },
      }),
      markersIn: (data) => data.notes.map((n) => n.content),
    },
    {
      id: "custom_dashboard_create",
      draft: (marker) => ({ name: "create_custom_dashboard", arguments: { name: marker } }),
      markersIn: (data) => data.dashboards.map((d) => d.name),
    },
    {
      id: "task_create",
      longTail: true,
      draft: (marker, i) => ({
        name: "draft_api_write",
        arguments: {
          operation: "task_create",
          path: { operation_id: on(i) },
          body: { title: marker },
        },
      }),
      markersIn: (data) => data.tasks.map((t) => t.title),
    },
    {
      id: "calendar_event_create",
      longTail: true,
      draft: (marker) => ({
        name: "draft_api_write",
        arguments: {
          operation: "calendar_event_create",
          body: { title: marker, event_date: today, event_type: "custom" },
        },
      }),
      markersIn: (data) => data.calendarEvents.map((e) => e.title),
    },
  ];
}

/** Requested and confirmed writes, records, duplicates and losses of the kinds picked. */
export function tally(counts, confirmedMarkers, kindOf, pick) {
  const picked = (marker) => pick(kindOf.get(marker));
  const confirmed = confirmedMarkers.filter(picked);
  // Records count whether or not their write was confirmed: an unconfirmed one applied is news.
  const records = [...counts].filter(([marker]) => picked(marker));
  return {
    requested: [...kindOf.keys()].filter(picked).length,
    confirmed: confirmed.length,
    records: records.reduce((sum, [, n]) => sum + n, 0),
    duplicates: records.filter(([, n]) => n > 1).length,
    lost_confirmed_writes: confirmed.filter((m) => !counts.has(m)).length,
  };
}

/**
 * What the request log shows of the long-tail writes: every request that reached their
 * routes (faults and drops included), and the intents sent under more than one
 * Idempotency-Key or, for a manual event, more than one client_request_id. Both must be 0:
 * one intent, one key, however many deliveries.
 */
function deliveries(log, routes, kindOf) {
  const keys = new Map(); // marker -> Idempotency-Keys seen
  const requestIds = new Map(); // marker -> client_request_ids seen
  let requests = 0;
  for (const entry of log) {
    if (!routes.has(entry.routeId) || !kindOf.has(entry.body?.title)) continue;
    const marker = entry.body.title;
    requests++;
    add(keys, marker, entry.headers["idempotency-key"]);
    if (entry.body.client_request_id !== undefined)
      add(requestIds, marker, entry.body.client_request_id);
  }
  const several = (seen) => [...seen.values()].filter((values) => values.size > 1).length;
  return {
    requests_sent: requests,
    sent_under_several_idempotency_keys: several(keys),
    sent_under_several_client_request_ids: several(requestIds),
  };
}

function add(map, key, value) {
  if (!map.has(key)) map.set(key, new Set());
  map.get(key).add(value);
}

/**
 * The faults of a chaos run: 20% of all requests fail before anything is applied, 10% of writes
 * are applied and then dropped, a 429 burst (every request refused with Retry-After, for 300 ms)
 * every `burstEveryMs`, every bearer expired every `expireEveryMs`. Returns what stops the timed
 * ones.
 */
export function injectFaults(control, { burstEveryMs, expireEveryMs }) {
  control.addFault({ probability: 0.1, action: { type: "status", status: 500 } });
  control.addFault({ probability: 0.1, action: { type: "status", status: 503 } });
  control.addFault({
    probability: 0.1,
    match: { kind: "write" },
    action: { type: "drop_after_apply" },
  });
  const bursts = setInterval(() => {
    const id = control.addFault({ action: { type: "status", status: 429, retryAfterSeconds: 1 } });
    setTimeout(() => control.removeFault(id), 300);
  }, burstEveryMs);
  const expiries = setInterval(() => control.expireAllBearers(), expireEveryMs);
  return () => {
    clearInterval(bursts);
    clearInterval(expiries);
  };
}

/** What the sandbox holds for a run's markers: marker -> records carrying it, every kind. */
export function recordsOfRun(control, kinds, run) {
  const counts = new Map();
  for (const kind of kinds)
    for (const marker of kind.markersIn(control.state.data))
      if (marker.startsWith(run)) counts.set(marker, (counts.get(marker) ?? 0) + 1);
  return counts;
}
