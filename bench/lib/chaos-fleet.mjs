// The fault-injection run across a fleet: three `serve --http` replicas sharing one Redis (a
// fresh key prefix, deleted at the end) and one sandbox in this process, under the same faults
// as `npm run chaos`. Each write is drafted on one replica and confirmed on the next; one
// replica is SIGKILLed while writes are in flight and started again. Duplicates and lost writes
// are counted from the sandbox's records and request log.
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startSandbox } from "@portfolio-mcp/sandbox";
import { stopChildren } from "../../scripts/lib/children.mjs";
import { injectFaults, recordsOfRun, tally, writeKinds } from "./chaos.mjs";
import { clientsFile, deploymentEnv, fleetRedis, killReplica, startReplica } from "./fleet.mjs";
import { httpClient } from "./processes.mjs";

const root = new URL("../..", import.meta.url).pathname;
const REPLICAS = 3;

export async function runChaosFleet({
  writes = 300,
  workers = 12,
  redisUrl,
  burstEveryMs = 1_500,
  expireEveryMs = 1_000,
  maxConfirms = 60,
  log = () => {},
} = {}) {
  const started = Date.now();
  const shared = await fleetRedis(redisUrl, "chaos");
  const sandbox = await startSandbox({ rateLimit: false, requestLogLimit: 200_000 });
  const { control } = sandbox;
  const user = {
    name: "camille",
    token: `chaos-fleet-${randomBytes(12).toString("hex")}`,
    delegated_user: { email: sandbox.credentials.delegatedUserEmail },
  };
  // The key's contract, as an administrator would export it: the long tail needs it.
  const dir = join(root, "build", "fleet");
  mkdirSync(dir, { recursive: true });
  const contractFile = join(dir, "chaos-contract.json");
  const exported = await fetch(
    new URL(`/_admin/keys/${sandbox.credentials.keyId}/contract.json`, sandbox.baseUrl),
  );
  writeFileSync(contractFile, await exported.text());
  const env = deploymentEnv({
    baseUrl: sandbox.baseUrl,
    credentials: sandbox.credentials,
    clients: clientsFile([user]),
    contractFile,
    redis: shared,
  });
  log(`chaos --fleet: starting ${REPLICAS} replicas on Redis prefix ${shared.prefix}`);
  const replicas = await Promise.all(
    Array.from({ length: REPLICAS }, (_, n) => startReplica(env, `chaos-${n}`)),
  );

  // The same faults as the single-process run, once every replica is up.
  const stopFaults = injectFaults(control, { burstEveryMs, expireEveryMs });

  const run = `fleet-${started}`;
  const operations = control.state.data.operations.slice(0, 20).map((o) => o.id);
  const kinds = writeKinds(operations, new Date().toISOString().slice(0, 10));
  const report = {
    replicas: REPLICAS,
    writes_requested: writes,
    confirmed: 0,
    failed: 0,
    unfinished: 0,
    draft_retries: 0,
    confirm_retries: 0,
    confirmed_on_another_replica: 0,
    calls_failed_over: 0,
    killed: 0,
    restarted: 0,
    failures: [],
  };
  const kindOf = new Map();
  const confirmedMarkers = [];
  let next = 0;
  // Someone who can write the fleet's Redis keys but lacks PORTFOLIO_STATE_SECRET, mid-run.
  const forger = forgeIntents(shared, `forged-${started}`, () => next / writes);

  /** Sessions of one worker, one per replica URL, opened when first needed. */
  function sessionsOf() {
    const open = new Map();
    return {
      /** Calls a tool on replica n, or the next live one when it cannot be reached. */
      async call(n, tool) {
        for (let hop = 0; hop < REPLICAS * 4; hop++) {
          const replica = replicas[(n + hop) % REPLICAS];
          try {
            let client = open.get(replica.url);
            if (!client) {
              client = await httpClient(replica.url, { authorization: `Bearer ${user.token}` });
              open.set(replica.url, client);
            }
            return { reply: await client.callTool(tool), on: replica.name };
          } catch {
            // Dead or restarting (connection refused, reset, unknown session): another one.
            report.calls_failed_over++;
            const dead = open.get(replica.url);
            open.delete(replica.url);
            dead?.close().catch(() => {});
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
        throw new Error(`no replica answered ${tool.name}`);
      },
      close: () => Promise.all([...open.values()].map((c) => c.close().catch(() => {}))),
    };
  }

  const durations = [];
  const draftErrors = new Set();
  async function one(i, sessions) {
    const began = Date.now();
    try {
      await write(i, sessions);
    } finally {
      durations.push({ i, ms: Date.now() - began });
    }
  }

  async function write(i, sessions) {
    const marker = `${run}-${i}`;
    const kind = kinds[i % kinds.length];
    kindOf.set(marker, kind);
    let draft;
    let draftedOn;
    for (let attempt = 0; attempt < 30 && !draft; attempt++) {
      const { reply, on } = await sessions.call(i % REPLICAS, kind.draft(marker, i));
      if (reply.isError) {
        report.draft_retries++;
        draftErrors.add(reply.content?.[0]?.text);
      } else [draft, draftedOn] = [reply.structuredContent, on];
    }
    if (!draft) return void report.unfinished++;
    for (let attempt = 0; attempt < maxConfirms; attempt++) {
      // Confirmed on the next replica: the draft lives in Redis, not in the drafting process.
      const { reply, on } = await sessions.call((i + 1 + attempt) % REPLICAS, {
        name: "confirm_write",
        arguments: { confirmation_id: draft.confirmation_id },
      });
      if (!reply.isError && reply.structuredContent.status === "succeeded") {
        report.confirmed++;
        if (on !== draftedOn) report.confirmed_on_another_replica++;
        confirmedMarkers.push(marker);
        return;
      }
      const text = reply.content?.[0]?.text ?? "";
      if (reply.isError && text.endsWith("Nothing was written.")) {
        report.failed++; // a definitive refusal, recorded: never resent
        report.failures.push(text);
        return;
      }
      report.confirm_retries++; // uncertain, rate limited, or another replica at the same time
    }
    report.unfinished++;
  }

  // One replica dies (SIGKILL) with writes in flight, a third of the way in, and comes back.
  const killer = (async () => {
    while (next < writes / 3) await new Promise((resolve) => setTimeout(resolve, 50));
    const victim = replicas[1];
    log(`chaos --fleet: SIGKILL ${victim.name} with writes in flight`);
    await killReplica(victim);
    report.killed++;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    replicas[1] = await startReplica(env, victim.name);
    report.restarted++;
    log(`chaos --fleet: ${victim.name} started again`);
  })();

  await Promise.all(
    Array.from({ length: workers }, async () => {
      const sessions = sessionsOf();
      while (next < writes) await one(next++, sessions);
      await sessions.close();
    }),
  );
  await killer;
  await forger.stop();
  stopFaults();
  control.clearFaults();

  const counts = recordsOfRun(control, kinds, run);
  const logEntries = control.requests();
  const all = tally(counts, confirmedMarkers, kindOf, () => true);
  report.records = all.records;
  report.duplicates = all.duplicates;
  report.lost_confirmed_writes = all.lost_confirmed_writes;
  Object.assign(report, keysPerWrite(logEntries, kindOf));
  report.forged_injected = forger.injected;
  report.forged_delivered = logEntries.filter((e) =>
    JSON.stringify(e.body ?? {}).includes(forger.marker),
  ).length;
  report.forged_quarantined = await shared.redis.client.hLen(`${shared.prefix}intents-quarantine`);
  report.token_exchanges = control.stats().tokenExchanges;
  report.upstream_requests = control.stats().requests;
  report.injected = {
    failed_500_503: logEntries.filter((e) => e.status === 500 || e.status === 503).length,
    dropped_after_apply: logEntries.filter((e) => e.status === null).length,
    rate_limited_429: logEntries.filter((e) => e.status === 429).length,
    refused_401: logEntries.filter((e) => e.status === 401).length,
  };
  report.draft_errors = [...draftErrors].slice(0, 5);
  report.seconds = Math.round((Date.now() - started) / 100) / 10;
  const sorted = durations.map((d) => d.ms).sort((a, b) => a - b);
  report.write_seconds = {
    p50: Math.round(sorted[Math.floor(sorted.length / 2)] / 100) / 10,
    max: Math.round(sorted[sorted.length - 1] / 100) / 10,
  };

  await stopChildren(replicas.map((r) => r.child.pid));
  await sandbox.close();
  report.redis_keys_deleted = await shared.drop();
  return report;
}

/**
 * Forged "confirmed" intents written straight into Redis while the second third of the run is
 * in flight, every 400 ms: copies of the fleet's genuine drafts with another body (their MAC no
 * longer holds), and records with no MAC at all; all marked so that a delivery of any of them
 * shows in the sandbox's log. Each is due at once for the replicas' look for abandoned work.
 */
function forgeIntents(shared, marker, progress) {
  const { redis, prefix } = shared;
  let injected = 0;
  let stopped = false;
  const forge = async () => {
    const ids = [];
    for await (const keys of redis.client.scanIterator({
      MATCH: `${prefix}intent:cf_*`,
      COUNT: 200,
    }))
      ids.push(...keys);
    const key = ids[Math.floor(Math.random() * ids.length)];
    const doc = key ? await redis.client.hGet(key, "doc") : null;
    if (!doc) return;
    const genuine = JSON.parse(doc);
    const name = `${marker}-${injected}`;
    const id = `cf_${marker.replace(/[^A-Za-z0-9]/g, "")}${injected}`.slice(0, 60);
    const body =
      genuine.body && typeof genuine.body === "object"
        ? Object.fromEntries(
            Object.entries(genuine.body).map(([k, v]) => [k, typeof v === "string" ? name : v]),
          )
        : { name };
    const forged = {
      ...genuine,
      id,
      body,
      state: "sending",
      confirmedAt: new Date().toISOString(),
      ...(injected % 2 === 0 ? { mac: undefined } : {}),
    };
    await redis.client.hSet(`${prefix}intent:${id}`, { doc: JSON.stringify(forged), rev: "1" });
    await redis.client.zAdd(`${prefix}intents-open`, { score: 0, value: id });
    injected++;
  };
  const done = (async () => {
    while (!stopped && progress() < 1 / 3) await new Promise((r) => setTimeout(r, 100));
    while (!stopped && progress() < 2 / 3) {
      await forge().catch(() => {});
      await new Promise((r) => setTimeout(r, 400));
    }
  })();
  return {
    marker,
    get injected() {
      return injected;
    },
    async stop() {
      stopped = true;
      await done;
      // The replicas look every 5 s: give them one more look at the last ones.
      await new Promise((r) => setTimeout(r, 6_000));
    },
  };
}

/**
 * Every request that reached a write route of this run, and the writes sent under more than
 * one Idempotency-Key (must be 0: one intent, one key, whichever replica sent it).
 */
function keysPerWrite(log, kindOf) {
  const keys = new Map();
  let requests = 0;
  for (const entry of log) {
    const body = entry.body ?? {};
    const marker = body.title ?? body.name ?? body.content;
    if (entry.method !== "POST" || !kindOf.has(marker)) continue;
    requests++;
    if (!keys.has(marker)) keys.set(marker, new Set());
    keys.get(marker).add(entry.headers["idempotency-key"]);
  }
  return {
    write_requests_sent: requests,
    sent_under_several_idempotency_keys: [...keys.values()].filter((k) => k.size > 1).length,
  };
}
