import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SharedRedis } from "../../src/state/redis.js";
import { type WriteDraft, WriteGate } from "../../src/writes/gate.js";
import type { Intent } from "../../src/writes/intent.js";
import { IntentMac } from "../../src/writes/intent-mac.js";
import { FileJournal, type IntentStore } from "../../src/writes/journal.js";
import { RedisJournal } from "../../src/writes/redis-journal.js";
import { capturedLogger, clientFor } from "../helpers/api.js";
import { dropAndClose, testRedis } from "../helpers/redis.js";

let sandbox: Sandbox;
let redis: SharedRedis;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  redis = await testRedis("journal");
});
afterAll(async () => {
  await dropAndClose(redis);
  await sandbox.close();
});

const caller = { sessionId: "s-1", client: "camille" };
/** The fleet's MAC key in these tests: every replica here shares it. */
const mac = new IntentMac(Buffer.alloc(32, 7));
const user = () => ({ email: sandbox.credentials.delegatedUserEmail });
const dashboard = (name: string): WriteDraft => ({
  operation: "custom_dashboard_create",
  path: {},
  body: { name },
  preview: { action: "Create a custom dashboard", target: name, fields: { name }, billable: false },
});

/** An intent as the gate would store it, without going through one. */
function intent(id: string, state: Intent["state"] = "pending"): Intent {
  const now = new Date().toISOString();
  return {
    id,
    confirmationId: `x [${id}]`,
    operation: "custom_dashboard_create",
    path: {},
    body: { name: "n", layout: [], big: 12345678901234567890n.toString() },
    delegatedUser: null,
    caller,
    upstream: { baseUrl: "http://x/v1", keyId: "k" },
    idempotencyKey: `pmcp-${id}`,
    bodyDigest: "d".repeat(64),
    channel: "two-step",
    preview: { action: "a", target: "t", recorded_as: "r", fields: {}, billable: false },
    state,
    createdAt: now,
    expiresAt: now,
    confirmedAt: null,
    updatedAt: now,
    attempts: 0,
    result: null,
    error: null,
  };
}

const truncated = (whole: string) => whole.slice(0, whole.indexOf('"confirmedAt"') + 20);

const stores: Array<[string, () => IntentStore]> = [
  ["FileJournal", () => new FileJournal(mkdtempSync(join(tmpdir(), "store-")), { mac })],
  ["RedisJournal", () => new RedisJournal(redis, mac)],
];

describe.each(stores)("the store contract: %s", (_name, make) => {
  it("stores, reads back unchanged, lists and removes", async () => {
    const store = make();
    // A confirmed write not finished yet: what every store lists for a start to finish.
    const a = intent(`cf_${_name}aaaaaaaa`, "uncertain");
    await store.save(a);
    const back = await store.read(a.id);
    const { revision: _revision, mac: signed, ...rest } = back as Intent;
    expect(rest).toEqual(a); // [] stays [], long numbers stay whole
    expect(signed).toMatch(/^[0-9a-f]{64}$/);
    expect((await store.load()).map((i) => i.id)).toContain(a.id);
    await store.remove(a.id);
    expect(await store.read(a.id)).toBeNull();
    expect(await store.read("../../etc/passwd")).toBeNull();
  });

  it("replaces only from the revision it was read at", async () => {
    const store = make();
    const id = `cf_${_name}bbbbbbbb`;
    const created = await store.replace(intent(id), 0);
    expect(created?.revision).toBe(1);
    expect(await store.replace(intent(id, "cancelled"), 0)).toBeNull(); // someone came first
    const moved = await store.replace({ ...(created as Intent), state: "sending" }, 1);
    expect(moved?.revision).toBe(2);
    expect((await store.read(id))?.state).toBe("sending");
    const settled = await store.settle({ ...(moved as Intent), state: "succeeded" }, "me");
    // The file store has one process: its lease is always held. Redis's is checked below.
    if (store instanceof FileJournal) expect(settled?.state).toBe("succeeded");
    await store.remove(id);
  });
});

describe("RedisJournal", () => {
  it("lets one owner at a time hold a delivery lease, and only the holder settles", async () => {
    const store = new RedisJournal(redis, mac);
    const id = "cf_leaseaaaaaaaa";
    const draft = (await store.replace(intent(id), 0)) as Intent;
    const sending = { ...draft, state: "sending" as const };
    const first = await store.replace(sending, 1, { owner: "a", ms: 5_000 });
    expect(first?.revision).toBe(2);
    expect(await store.replace(sending, 2, { owner: "b", ms: 5_000 })).toBeNull();
    expect(await store.renew(id, { owner: "b", ms: 5_000 })).toBe(false);
    expect(await store.renew(id, { owner: "a", ms: 5_000 })).toBe(true);
    expect(await store.settle({ ...sending, state: "succeeded" }, "b")).toBeNull();
    expect((await store.settle({ ...sending, state: "succeeded" }, "a"))?.revision).toBe(3);
    expect(await store.leaseHolder(id)).toBeNull();
    await store.remove(id);
  });

  it("quarantines damaged entries with one log line each and keeps the good ones", async () => {
    const logs = capturedLogger();
    const store = new RedisJournal(redis, mac, { logger: logs.logger });
    const good = intent("cf_goodaaaaaaaaaa", "uncertain");
    await store.save(good);
    const bad = {
      cf_truncatedaaaaa: truncated(JSON.stringify({ ...good, id: "cf_truncatedaaaaa" })),
      cf_nullaaaaaaaaaa: "null",
      cf_otheridaaaaaaa: JSON.stringify(good),
    };
    // Damaged entries of confirmed writes, as the open set lists them (score: +inf, uncertain).
    for (const [id, doc] of Object.entries(bad)) {
      await redis.client.hSet(redis.key(`intent:${id}`), { doc, rev: "1" });
      await redis.client.zAdd(redis.key("intents-open"), { score: Infinity, value: id });
    }
    await redis.client.hSet(redis.key("intent:cf_norevaaaaaaaaa"), {
      doc: JSON.stringify({ ...good, id: "cf_norevaaaaaaaaa" }),
    });
    await redis.client.zAdd(redis.key("intents-open"), {
      score: Infinity,
      value: "cf_norevaaaaaaaaa",
    });

    const loaded = await store.load();
    expect(loaded.map((i) => i.id)).toEqual(["cf_goodaaaaaaaaaa"]);
    expect(store.quarantined).toBe(4);
    const lines = logs.lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg.startsWith("quarantined"));
    expect(lines).toHaveLength(4);
    expect(lines.find((l) => l.intent === "cf_truncatedaaaaa")).toMatchObject({
      problem: "it is not complete JSON (truncated?)",
      state: "uncertain",
      idempotencyKey: good.idempotencyKey,
    });
    expect(await redis.client.hLen(redis.key("intents-quarantine"))).toBe(4);
    expect(await store.load()).toHaveLength(1);
    await store.remove(good.id);
  });
});

describe("RedisJournal's upkeep", () => {
  it("lets drafts and finished writes expire on Redis, and keeps confirmed unfinished ones", async () => {
    const store = new RedisJournal(redis, mac);
    const inTenMinutes = new Date(Date.now() + 600_000).toISOString();
    const ttl = (id: string) => redis.client.pTTL(redis.key(`intent:${id}`));
    await store.save({ ...intent("cf_ttlpendingaaa"), expiresAt: inTenMinutes });
    await store.save(intent("cf_ttldoneaaaaaa", "succeeded"));
    await store.save(intent("cf_ttlexpiredaaa", "expired"));
    await store.save(intent("cf_ttluncertaina", "uncertain"));
    // A draft: its deadline plus a minute, so a late confirmation still hears "expired".
    expect(await ttl("cf_ttlpendingaaa")).toBeGreaterThan(600_000);
    expect(await ttl("cf_ttlpendingaaa")).toBeLessThanOrEqual(660_000);
    expect(await ttl("cf_ttldoneaaaaaa")).toBeGreaterThan(6 * 86_400_000);
    expect(await ttl("cf_ttlexpiredaaa")).toBeLessThanOrEqual(60_000);
    expect(await ttl("cf_ttluncertaina")).toBe(-1); // never expires while unfinished
    // Confirmed again and sending: still kept; finished: a week.
    const sending = await store.replace({ ...intent("cf_ttluncertaina"), state: "sending" }, 1, {
      owner: "me",
      ms: 5_000,
    });
    expect(await ttl("cf_ttluncertaina")).toBe(-1);
    await store.settle({ ...(sending as Intent), state: "succeeded" }, "me");
    expect(await ttl("cf_ttluncertaina")).toBeGreaterThan(6 * 86_400_000);
    expect(await store.load()).toEqual([]);
    for (const id of [
      "cf_ttlpendingaaa",
      "cf_ttldoneaaaaaa",
      "cf_ttlexpiredaaa",
      "cf_ttluncertaina",
    ])
      await store.remove(id);
  });

  it("looks for abandoned deliveries at the cost of the lapsed leases, not of every intent", async () => {
    let commands = 0;
    const counted = {
      ...redis,
      run: ((work) => {
        commands++;
        return redis.run(work);
      }) as SharedRedis["run"],
    };
    const store = new RedisJournal(counted, mac);
    for (let n = 0; n < 300; n++) {
      const id = `cf_many${String(n).padStart(9, "0")}`;
      await store.save(intent(id, n % 2 ? "succeeded" : "pending"));
    }
    const live = await store.replace(intent("cf_manylivesending", "pending"), 0);
    await store.replace({ ...(live as Intent), state: "sending" }, 1, { owner: "a", ms: 60_000 });
    const lapsed = await store.replace(intent("cf_manylapsedsend", "pending"), 0);
    await store.replace({ ...(lapsed as Intent), state: "sending" }, 1, { owner: "b", ms: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    commands = 0;
    const found = await store.abandoned();
    expect(found.map((i) => i.id)).toEqual(["cf_manylapsedsend"]);
    expect(commands).toBe(2); // the lapsed ids, then the one intent
    // Taken over (a new lease), it is live again: nobody else takes it for abandoned.
    const [again] = found;
    expect(await store.replace(again as Intent, 2, { owner: "c", ms: 60_000 })).not.toBeNull();
    expect(await store.abandoned()).toEqual([]);
    for (let n = 0; n < 300; n++) await store.remove(`cf_many${String(n).padStart(9, "0")}`);
    await store.remove("cf_manylivesending");
    await store.remove("cf_manylapsedsend");
  });
});

/** A gate of its own (its own ApiClient: another replica) on the shared Redis journal. */
async function replica(maxPendingPerUser = 50) {
  const { api, logs } = clientFor(sandbox);
  const store = new RedisJournal(redis, mac, { logger: logs.logger });
  const gate = await WriteGate.open({
    store,
    api,
    logger: logs.logger,
    ttlMs: 60_000,
    maxPendingPerUser,
    // Longer than any delivery here takes on a loaded machine: with 600 ms, a send at load 7
    // outlived its lease, the other replica took the write over (rightly: same key), and the
    // test read "sending" where it waits for the outcome. The lapsed-lease test below gives the
    // dying replica's lease its own 600 ms.
    deliveryLeaseMs: 10_000,
    recoverAbandonedEveryMs: 200,
  });
  return {
    gate,
    store,
    logs,
    async close() {
      gate.close();
      await api.close();
    },
  };
}

const recordsNamed = (name: string) =>
  sandbox.control.state.data.dashboards.filter((d) => d.name === name);

describe("two replicas on one Redis", () => {
  it("confirm a draft made on the other", async () => {
    const [one, two] = [await replica(), await replica()];
    try {
      const drafted = await one.gate.propose(
        dashboard("Drafted on one"),
        caller,
        user(),
        "two-step",
      );
      const done = await two.gate.confirm(drafted.confirmationId, caller, user(), "two-step");
      expect(done.state).toBe("succeeded");
      expect(recordsNamed("Drafted on one")).toHaveLength(1);
      // The first replica learns the outcome from the store and sends nothing more.
      const mark = sandbox.control.mark();
      expect(
        (await one.gate.confirm(drafted.confirmationId, caller, user(), "two-step")).state,
      ).toBe("succeeded");
      expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("count a user's drafts awaiting confirmation as the store has them, not as first seen", async () => {
    // Found by npm run chaos -- --fleet: drafts confirmed on another replica stayed "pending"
    // in the drafting replica's memory, which then refused every new draft until they expired.
    const [one, two] = [await replica(2), await replica(2)];
    try {
      for (const name of ["Limit one", "Limit two"]) {
        const drafted = await one.gate.propose(dashboard(name), caller, user(), "two-step");
        expect(
          (await two.gate.confirm(drafted.confirmationId, caller, user(), "two-step")).state,
        ).toBe("succeeded");
      }
      const third = await one.gate.propose(dashboard("Limit three"), caller, user(), "two-step");
      expect(third.state).toBe("pending");
      await one.gate.propose(dashboard("Limit four"), caller, user(), "two-step");
      await expect(
        one.gate.propose(dashboard("Limit five"), caller, user(), "two-step"),
      ).rejects.toThrow("2 drafted writes already await confirmation for this user");
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("deliver once when both confirm the same intent at the same moment, many times over", async () => {
    const [one, two] = [await replica(), await replica()];
    try {
      for (let round = 0; round < 5; round++) {
        const name = `Race ${round}`;
        const drafted = await one.gate.propose(dashboard(name), caller, user(), "two-step");
        const mark = sandbox.control.mark();
        const outcomes = await Promise.all(
          [one, two, one, two, two, one].map((r) =>
            r.gate.confirm(drafted.confirmationId, caller, user(), "two-step"),
          ),
        );
        expect(outcomes.map((o) => o.state)).toEqual(Array(6).fill("succeeded"));
        const sent = sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" });
        expect(sent).toHaveLength(1);
        expect(sent[0]?.headers["idempotency-key"]).toBe(drafted.idempotencyKey);
        expect(recordsNamed(name)).toHaveLength(1);
      }
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("finish a delivery whose replica died after the API applied it: same key, one record", async () => {
    const [survivor, doomed] = [await replica(), await replica()];
    try {
      const drafted = await doomed.gate.propose(dashboard("Orphaned"), caller, user(), "two-step");
      // The doomed replica takes the lease and its request reaches the API, which applies it;
      // then it dies before the answer: its lease is left to run out.
      const claimed = await doomed.store.replace(
        { ...drafted, state: "sending", confirmedAt: new Date().toISOString(), attempts: 1 },
        drafted.revision ?? 0,
        { owner: "replica-that-dies", ms: 600 },
      );
      expect(claimed).not.toBeNull();
      sandbox.control.dropAfterApply(1, { routeId: "custom_dashboard_create" });
      const { api } = clientFor(sandbox, { maxRetries: 0 });
      await expect(
        api.call(
          "custom_dashboard_create",
          { body: drafted.body as { name: string } },
          { idempotencyKey: drafted.idempotencyKey },
        ),
      ).rejects.toThrow();
      await api.close();
      expect(recordsNamed("Orphaned")).toHaveLength(1);

      // While the lease lives, the survivor leaves it alone.
      const mark = sandbox.control.mark();
      const early = await survivor.gate.recoverAbandoned();
      expect(early.map((i) => i.id)).not.toContain(drafted.id);
      expect(sandbox.control.requests({ since: mark })).toEqual([]);
      // Its periodic look (every 200 ms here) finishes it once the lease has run out.
      const deadline = Date.now() + 5_000;
      while ((await survivor.store.read(drafted.id))?.state !== "succeeded") {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const sent = sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" });
      expect(sent.map((r) => r.headers["idempotency-key"])).toEqual([drafted.idempotencyKey]);
      expect(recordsNamed("Orphaned")).toHaveLength(1);
    } finally {
      await survivor.close();
      await doomed.close();
    }
  });
});
