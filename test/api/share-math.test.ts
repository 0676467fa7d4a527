import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Bucket,
  decide,
  FRESH_BUCKET,
  factorAt,
  KEY_DECREASE,
  KEY_FLOOR,
  learn,
  PRINCIPAL_DECREASE,
  PRINCIPAL_FLOOR,
  RECOVERY_PER_MS,
  type ShareLimits,
} from "../../src/http/share-math.js";

const LIMITS: ShareLimits = { perMinute: 600, share: 0.5, maxInFlight: 8 };
const T0 = 1_000_000;

/** Grants in a row at one instant, for one principal, from the given buckets. */
function burst(limits: ShareLimits, key: Bucket, principal: Bucket, now: number) {
  let granted = 0;
  for (;;) {
    const d = decide(limits, key, principal, 0, now);
    if (!d.go) return { granted, key, principal, refusal: d };
    granted++;
    key = d.key;
    principal = d.principal;
  }
}

describe("the rate of one key shared by its principals", () => {
  it("gives a principal a burst of one second of its share, then its interval", () => {
    // 600 a minute: the key 100 ms apart, a principal at 50 % 200 ms apart, five at once.
    const first = burst(LIMITS, FRESH_BUCKET, FRESH_BUCKET, T0);
    expect(first.granted).toBe(5);
    expect(first.refusal).toMatchObject({ reason: "client_share", intervalMs: 200 });
    expect(first.refusal.waitMs).toBeCloseTo(200, 6);
    // Once that wait has passed, exactly one more.
    const later = burst(LIMITS, first.key, first.principal, T0 + 200);
    expect(later.granted).toBe(1);
  });

  it("holds the key's rate over every principal together", () => {
    let key = FRESH_BUCKET;
    const principals = new Map<string, Bucket>();
    let granted = 0;
    // Twenty principals each asking as fast as they can for one second of time.
    for (let now = T0; now < T0 + 1_000; now += 5) {
      for (let p = 0; p < 20; p++) {
        const d = decide(LIMITS, key, principals.get(`p${p}`) ?? FRESH_BUCKET, 0, now);
        if (!d.go) continue;
        granted++;
        key = d.key;
        principals.set(`p${p}`, d.principal);
      }
    }
    // The key's burst (one second's worth) plus one second at its rate.
    expect(granted).toBeLessThanOrEqual(10 + 10);
    expect(granted).toBeGreaterThanOrEqual(19);
  });

  it("never grants more than a bucket's burst plus its rate over any stretch of time", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 3 })), {
          minLength: 1,
          maxLength: 300,
        }),
        fc.integer({ min: 1, max: 100 }),
        (steps, sharePercent) => {
          const limits = { ...LIMITS, share: sharePercent / 100 };
          let key = FRESH_BUCKET;
          const principals: Bucket[] = [FRESH_BUCKET, FRESH_BUCKET, FRESH_BUCKET, FRESH_BUCKET];
          const grants: Array<{ at: number; who: number }> = [];
          let now = T0;
          for (const [gap, who] of steps) {
            now += gap;
            const d = decide(limits, key, principals[who] as Bucket, 0, now);
            if (!d.go) {
              expect(d.waitMs).toBeGreaterThan(0);
              continue;
            }
            key = d.key;
            principals[who] = d.principal;
            grants.push({ at: now, who });
          }
          // GCRA's bound: over [a, b], at most burst + (b - a) / interval grants.
          const keyStep = 60_000 / limits.perMinute;
          const principalStep = keyStep / limits.share;
          for (const [i, start] of grants.entries()) {
            for (const end of grants.slice(i)) {
              const span = end.at - start.at;
              const all = grants.filter((g) => g.at >= start.at && g.at <= end.at);
              expect(all.length).toBeLessThanOrEqual(
                Math.max(1, 1_000 / keyStep) + span / keyStep + 1e-9,
              );
              const own = all.filter((g) => g.who === start.who);
              expect(own.length).toBeLessThanOrEqual(
                Math.max(1, 1_000 / principalStep) + span / principalStep + 1e-9,
              );
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("keeps part of the key's burst for a principal well within its share", () => {
    // Share 100 %: one busy principal could take the whole key.
    const limits = { ...LIMITS, share: 1 };
    const busy = burst(limits, FRESH_BUCKET, FRESH_BUCKET, T0);
    // The key refuses the busy one while a quarter of its burst is left...
    expect(busy.refusal.reason).toBe("key_rate");
    expect(busy.granted).toBeLessThan(10);
    // ...which a light one still gets, at once.
    const light = decide(limits, busy.key, FRESH_BUCKET, 0, T0);
    expect(light.go).toBe(true);
  });

  it("makes a principal with its bound in flight wait, whatever its rate", () => {
    const d = decide(LIMITS, FRESH_BUCKET, FRESH_BUCKET, 8, T0);
    expect(d).toMatchObject({ go: false, reason: "in_flight" });
  });
});

describe("learning from 429s", () => {
  it("halves the share of the principal that drew it and lowers the key's by a fifth", () => {
    const key = learn(FRESH_BUCKET, 2_000, KEY_DECREASE, KEY_FLOOR, T0);
    const culprit = learn(FRESH_BUCKET, 2_000, PRINCIPAL_DECREASE, PRINCIPAL_FLOOR, T0);
    expect(factorAt(key, T0)).toBe(0.8);
    expect(factorAt(culprit, T0)).toBe(0.5);
    // The culprit 125 ms / 0.25 = 500 ms apart; a neighbour 125 ms / 0.5 = 250 ms apart.
    const slowed = decide(LIMITS, key, culprit, 0, T0);
    const neighbour = decide(LIMITS, key, FRESH_BUCKET, 0, T0);
    expect(slowed.intervalMs).toBe(500);
    expect(neighbour.intervalMs).toBe(250);
    expect(slowed.keyFactor).toBe(0.8);
  });

  it("learns once per cooldown: the 429s that crossed it on the wire teach nothing more", () => {
    const once = learn(FRESH_BUCKET, 2_000, PRINCIPAL_DECREASE, PRINCIPAL_FLOOR, T0);
    const again = learn(once, 2_000, PRINCIPAL_DECREASE, PRINCIPAL_FLOOR, T0 + 500);
    expect(again).toBe(once);
    const after = learn(once, 2_000, PRINCIPAL_DECREASE, PRINCIPAL_FLOOR, T0 + 2_000);
    expect(factorAt(after, T0 + 2_000)).toBe(0.25);
  });

  it("recovers after the cooldown, a quarter of the rate a minute, up to the setting", () => {
    const lowered = learn(FRESH_BUCKET, 30_000, PRINCIPAL_DECREASE, PRINCIPAL_FLOOR, T0);
    expect(factorAt(lowered, T0 + 30_000)).toBe(0.5); // nothing back during the cooldown
    expect(factorAt(lowered, T0 + 30_000 + 60_000)).toBeCloseTo(0.75, 9);
    expect(factorAt(lowered, T0 + 30_000 + 120_000)).toBe(1);
    expect(RECOVERY_PER_MS * 60_000).toBeCloseTo(0.25, 12);
  });

  it("never goes below its floor", () => {
    let bucket = FRESH_BUCKET;
    for (let n = 0; n < 20; n++)
      bucket = learn(bucket, 1_000, KEY_DECREASE, KEY_FLOOR, T0 + n * 1_000);
    expect(factorAt(bucket, bucket.learntAt)).toBe(KEY_FLOOR);
  });
});
