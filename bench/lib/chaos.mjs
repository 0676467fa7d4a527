// The fault-injection run: confirmed writes through the real MCP server and gate while the
// sandbox fails, drops, rate-limits and expires bearers. Shared by `npm run chaos` and the
// test suite's short variant.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { connectApi } from "../../dist/api/client.js";
import { Directory } from "../../dist/api/directory.js";
import { createLogger } from "../../dist/log.js";
import { startSandbox } from "../../dist/sandbox/index.js";
import { createMcpServer } from "../../dist/server.js";
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
  // 20% of all requests fail before anything is applied; 10% of writes are applied, then dropped.
  control.addFault({ probability: 0.1, action: { type: "status", status: 500 } });
  control.addFault({ probability: 0.1, action: { type: "status", status: 503 } });
  control.addFault({
    probability: 0.1,
    match: { kind: "write" },
    action: { type: "drop_after_apply" },
  });
  // A 429 burst is a window of time in which every request is refused with Retry-After.
  const bursts = setInterval(() => {
    const id = control.addFault({ action: { type: "status", status: 429, retryAfterSeconds: 1 } });
    setTimeout(() => control.removeFault(id), 300);
  }, burstEveryMs);
  const expiries = setInterval(() => control.expireAllBearers(), expireEveryMs);

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
    },
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
  const report = {
    writes_requested: writes,
    confirmed: 0,
    failed: 0,
    unfinished: 0,
    draft_retries: 0,
    confirm_retries: 0,
    failures: [],
  };
  const confirmedMarkers = [];
  let next = 0;

  async function one(i) {
    const marker = `${run}-${i}`;
    const draftCall =
      i % 2 === 0
        ? {
            name: "create_operation_note",
            arguments: { operation_id: operations[i % operations.length], content: marker },
          }
        : { name: "create_custom_dashboard", arguments: { name: marker } };
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
  clearInterval(bursts);
  clearInterval(expiries);
  control.clearFaults();

  // Count what the sandbox holds for this run's markers.
  const counts = new Map();
  for (const note of control.state.data.notes)
    if (note.content.startsWith(run)) counts.set(note.content, (counts.get(note.content) ?? 0) + 1);
  for (const dashboard of control.state.data.dashboards)
    if (dashboard.name.startsWith(run))
      counts.set(dashboard.name, (counts.get(dashboard.name) ?? 0) + 1);
  report.records = [...counts.values()].reduce((a, b) => a + b, 0);
  report.duplicates = [...counts.values()].filter((n) => n > 1).length;
  report.lost_confirmed_writes = confirmedMarkers.filter((m) => !counts.has(m)).length;
  const log = control.requests();
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
