import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiError } from "../../src/http/errors.js";
import { asPrincipal } from "../../src/http/principal.js";
import { RedisShareStore } from "../../src/http/redis-share.js";
import {
  type Bucket,
  decide,
  FRESH_BUCKET,
  KEY_DECREASE,
  KEY_FLOOR,
  learn,
  PRINCIPAL_DECREASE,
  PRINCIPAL_FLOOR,
  type ShareLimits,
} from "../../src/http/share-math.js";
import { LocalShareStore, type ShareStore } from "../../src/http/share-store.js";
import { type UpstreamPermit, UpstreamShare } from "../../src/http/upstream-share.js";
import type { SharedRedis } from "../../src/state/redis.js";
import { capturedLogger } from "../helpers/api.js";
import { dropAndClose, testRedis } from "../helpers/redis.js";

let redis: SharedRedis;
beforeAll(async () => {
  redis = await testRedis("share");
});
afterAll(async () => {
  await dropAndClose(redis);
});

const LIMITS: ShareLimits = { perMinute: 600, share: 0.5, maxInFlight: 3 };
const LEASE_MS = 5_000;
const T0 = 1_000_000;

/** A Redis store of its own (a key of its own), its scripts on the test's clock. */
function redisStore(limits: ShareLimits, now: () => number, lease = LEASE_MS) {
  const identity = { baseUrl: `http://k${randomBytes(6).toString("hex")}/v1`, keyId: "fleet" };
  return new RedisShareStore(
    redis,
    limits,
    identity,
    lease,
    capturedLogger().logger,
    Date.now,
    now,
  );
}

const TURN = { operationId: "deals_list", requestId: "r" };

describe("the fleet's buckets on Redis", () => {
  it("decide as the pure rules do, step for step (takes, releases, leases, 429s)", async () => {
    type Step =
      | { kind: "take"; who: number; gap: number }
      | { kind: "release"; who: number; gap: number }
      | { kind: "429"; who: number; gap: number; retryAfterMs: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          kind: fc.constant("take" as const),
          who: fc.nat(2),
          gap: fc.nat(300),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant("release" as const),
          who: fc.nat(2),
          gap: fc.nat(300),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant("429" as const),
          who: fc.nat(2),
          gap: fc.nat(3_000),
          retryAfterMs: fc.integer({ min: 0, max: 5_000 }),
        }),
      },
    );
    // Both scripts cached on Redis first: a first use is retried by its text, later than
    // the commands that follow it on the connection.
    const warm = redisStore(LIMITS, () => T0);
    warm.throttled("p", 1);
    await warm.take("p", "m");
    await redis.run((c) => c.ping());
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), async (steps) => {
        let now = T0;
        const store = redisStore(LIMITS, () => now);
        // The model: the pure functions, and the in-flight members with their leases' ends.
        let key: Bucket = FRESH_BUCKET;
        const buckets: Bucket[] = [FRESH_BUCKET, FRESH_BUCKET, FRESH_BUCKET];
        const flights: Array<Array<{ member: string; until: number }>> = [[], [], []];
        let members = 0;
        for (const s of steps) {
          now += s.gap;
          const principal = `p${s.who}`;
          const mine = flights[s.who] as Array<{ member: string; until: number }>;
          if (s.kind === "release") {
            const gone = mine.shift();
            if (gone) store.release(principal, gone.member);
            continue;
          }
          if (s.kind === "429") {
            key = learn(key, s.retryAfterMs, KEY_DECREASE, KEY_FLOOR, now);
            buckets[s.who] = learn(
              buckets[s.who] as Bucket,
              s.retryAfterMs,
              PRINCIPAL_DECREASE,
              PRINCIPAL_FLOOR,
              now,
            );
            store.throttled(principal, s.retryAfterMs);
            continue;
          }
          const live = mine.filter((f) => f.until > now);
          mine.splice(0, mine.length, ...live);
          const expected = decide(LIMITS, key, buckets[s.who] as Bucket, live.length, now);
          const member = `m${++members}`;
          const got = await store.take(principal, member);
          expect(got.go).toBe(expected.go);
          expect(got.intervalMs).toBeCloseTo(expected.intervalMs, 6);
          expect(got.keyFactor).toBeCloseTo(expected.keyFactor, 9);
          if (expected.go) {
            key = expected.key;
            buckets[s.who] = expected.principal;
            mine.push({ member, until: now + LEASE_MS });
          } else if (!got.go) {
            expect(got.reason).toBe(expected.reason);
            expect(got.waitMs).toBeCloseTo(expected.waitMs, 6);
          }
        }
        // Fire-and-forget commands (releases, 429s) land before the next script runs: one
        // connection keeps the order; this wait only lets the last ones in before cleanup.
        await redis.run((c) => c.ping());
      }),
      { numRuns: 40 },
    );
  }, 60_000);

  it("free the in-flight slots of a replica that died once their lease has run out", async () => {
    let now = T0;
    const store = redisStore({ ...LIMITS, share: 1 }, () => now, 1_000);
    for (const member of ["a", "b", "c"]) expect((await store.take("p", member)).go).toBe(true);
    // The replica holding them is gone: nobody releases them.
    now += 500;
    expect(await store.take("p", "d")).toMatchObject({ go: false, reason: "in_flight" });
    now += 600;
    expect((await store.take("p", "d")).go).toBe(true);
  });

  it("keep the names of principals out of the keys", async () => {
    const store = redisStore(LIMITS, () => T0);
    await store.take("http:camille", "m");
    const keys: string[] = [];
    for await (const batch of redis.client.scanIterator({ MATCH: `${redis.prefix}*` }))
      keys.push(...batch);
    expect(keys.join(" ")).not.toContain("camille");
  });

  it("counts alone, with one warning, while Redis cannot answer", async () => {
    const logs = capturedLogger();
    const closed = await testRedis("share-closed");
    await closed.close();
    let now = T0;
    const store = new RedisShareStore(
      closed,
      { ...LIMITS, share: 1 },
      { baseUrl: "http://down/v1", keyId: "k" },
      LEASE_MS,
      logs.logger,
      () => now,
    );
    const verdicts = [];
    for (let n = 0; n < 12; n++) verdicts.push((await store.take("p", `m${n}`)).go);
    // This replica's own buckets: the key's one-second burst, then no more at once.
    expect(verdicts.filter(Boolean).length).toBeGreaterThanOrEqual(7);
    expect(verdicts.at(-1)).toBe(false);
    // It asks Redis again a few seconds later: still down, and still the one warning.
    now += 6_000;
    expect((await store.take("p", "later")).go).toBe(true);
    expect(logs.lines.filter((l) => l.includes("counts alone"))).toHaveLength(1);
  });
});

/** A share over a local store, on the real clock, with short deadlines. */
function localShare(limits: Partial<ShareLimits> = {}, maxWaitMs = 2_000, store?: ShareStore) {
  const all = { ...LIMITS, ...limits };
  return new UpstreamShare(store ?? new LocalShareStore(all), { ...all, maxWaitMs });
}

describe("waiting for a turn", () => {
  it("lets each principal queue on its own: one client's backlog never holds another", async () => {
    const share = localShare({ maxInFlight: 8 }, 1_000);
    const held: UpstreamPermit[] = [];
    // Twenty requests of one client at once: five go (its burst); of the rest, those whose
    // turn (one every 200 ms) would come within the 1 s deadline wait, the others are refused.
    const busy = Array.from({ length: 20 }, () =>
      asPrincipal("http:busy", () => share.acquire(TURN)).then(
        (p) => held.push(p),
        () => {}, // refused: the tests below show how
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(held).toHaveLength(5);
    // Another client goes at once, ahead of them all.
    const other = await asPrincipal("http:other", () => share.acquire(TURN));
    expect(other.principal).toBe("http:other");
    expect(share.waiting).toBeGreaterThan(0);
    other.release();
    await Promise.all(busy);
    for (const p of held) p.release();
  });

  it("serves a principal's older work first, so walks finish instead of all crawling", async () => {
    const share = localShare({ maxInFlight: 1 });
    const order: string[] = [];
    const first = await asPrincipal("p", () => share.acquire(TURN));
    const newer = asPrincipal("p", () => share.acquire(TURN)).then((p) => {
      order.push("newer");
      p.release();
    });
    const older = asPrincipal(
      "p",
      () => share.acquire(TURN),
      () => Date.now() - 1_000,
    ).then((p) => {
      order.push("older");
      p.release();
    });
    first.release();
    await Promise.all([newer, older]);
    expect(order).toEqual(["older", "newer"]);
  });

  it("bounds a principal's requests in flight: the next waits for one to finish", async () => {
    const share = localShare({ maxInFlight: 2, share: 1 });
    const a = await asPrincipal("p", () => share.acquire(TURN));
    await asPrincipal("p", () => share.acquire(TURN));
    let third: UpstreamPermit | null = null;
    const waiting = asPrincipal("p", () => share.acquire(TURN)).then((p) => {
      third = p;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(third).toBeNull();
    a.release();
    await waiting;
    expect(third).not.toBeNull();
  });

  it("refuses, with one sentence naming the setting and when to retry, a wait past the deadline", async () => {
    const share = localShare({}, 300);
    const waits = await Promise.allSettled(
      Array.from({ length: 12 }, () => asPrincipal("http:busy", () => share.acquire(TURN))),
    );
    const refused = waits.filter((w) => w.status === "rejected");
    expect(refused.length).toBeGreaterThan(0);
    const error = (refused[0] as PromiseRejectedResult).reason as ApiError;
    expect(error).toMatchObject({ code: "rate_limited", reasonCode: "client_share" });
    expect(error.status).toBeUndefined();
    expect(error.message).toMatch(
      /^deals_list was not sent: this client has used its share of the Partner API key's rate \(PORTFOLIO_API_SHARE_PER_CLIENT: 50 % of PORTFOLIO_API_RATE_LIMIT_PER_MINUTE, 600 requests a minute\); retry in \d+ s\.$/,
    );
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    for (const w of waits) if (w.status === "fulfilled") w.value.release();
  });

  it("says when the key's rate was lowered after the API's 429s", async () => {
    const share = localShare({}, 0);
    const held = await asPrincipal("p", () => share.acquire(TURN));
    held.throttled(1_000);
    held.release();
    expect(share.keyPerMinute).toBe(480);
    const refusals = await Promise.allSettled(
      Array.from({ length: 5 }, () => asPrincipal("p", () => share.acquire(TURN))),
    );
    const refused = refusals.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect((refused.reason as ApiError).message).toContain(
      "(PORTFOLIO_API_SHARE_PER_CLIENT: 50 % of PORTFOLIO_API_RATE_LIMIT_PER_MINUTE, 600 requests a minute, lowered to 480 after the API's 429s)",
    );
    for (const r of refusals) if (r.status === "fulfilled") r.value.release();
  });

  it("refuses at once, with maxWait 0, a request beyond the in-flight bound", async () => {
    const share = localShare({ maxInFlight: 1 }, 0);
    const held = await asPrincipal("p", () => share.acquire(TURN));
    const refusal = await asPrincipal("p", () => share.acquire(TURN)).catch((e: ApiError) => e);
    expect((refusal as ApiError).message).toContain(
      "this client already has 1 request to the Partner API under way (PORTFOLIO_API_MAX_IN_FLIGHT_PER_CLIENT)",
    );
    held.release();
  });

  it("stops waiting when the caller cancels", async () => {
    const share = localShare({ maxInFlight: 1 });
    const held = await asPrincipal("p", () => share.acquire(TURN));
    const controller = new AbortController();
    const waiting = asPrincipal("p", () =>
      share.acquire({ ...TURN, signal: controller.signal }),
    ).catch((e: ApiError) => e);
    controller.abort();
    expect(await waiting).toMatchObject({ code: "aborted" });
    expect(share.waiting).toBe(0);
    held.release();
  });

  it("counts work outside any request as the server's own", async () => {
    const share = localShare();
    const permit = await share.acquire(TURN);
    expect(permit.principal).toBe("server");
    permit.release();
  });
});
