/**
 * The arithmetic of fair use of one API key, as pure functions: one process keeps these states
 * in memory, a fleet keeps them on Redis, where a Lua script (src/http/redis-share.ts) applies
 * the same rules with the constants below; a test runs both on the same sequences.
 *
 * Two GCRA buckets decide each upstream attempt: the key's (its whole rate) and the principal's
 * (a share of it). A bucket is its theoretical arrival time (`tat`): a request may go when
 * `tat` is at most the bucket's tolerance ahead of now, and then pushes `tat` one interval on.
 * Each bucket allows a burst of one second's worth of its rate. Neither reserves the future:
 * a request refused now takes nothing, so one principal's queue never delays another's.
 */

/** What a bucket remembers: its arrival time and what 429s taught it. */
export interface Bucket {
  /** Theoretical arrival time, ms. */
  tat: number;
  /** The learnt fraction of the configured rate in force at `learntAt` (1: all of it). */
  factor: number;
  /** When recovery of `factor` starts: the end of the cooldown of the 429 that lowered it. */
  learntAt: number;
}

export const FRESH_BUCKET: Bucket = { tat: 0, factor: 1, learntAt: 0 };

export interface ShareLimits {
  /** The key's rate, requests a minute, for the whole fleet. */
  perMinute: number;
  /** A principal's share of it, 0 < share <= 1. */
  share: number;
  /** A principal's upstream requests in flight at once, fleet-wide. */
  maxInFlight: number;
}

/** Why a request waits (or, past its deadline, is refused). */
export type WaitReason = "client_share" | "key_rate" | "in_flight";

/** Whether a request may go now; either way, the principal's interval and the key's factor. */
export type Verdict =
  | { go: true; intervalMs: number; keyFactor: number }
  | { go: false; waitMs: number; reason: WaitReason; intervalMs: number; keyFactor: number };

/** A verdict, and on a grant the buckets as they are once the request went. */
export type Decision =
  | Extract<Verdict, { go: false }>
  | (Extract<Verdict, { go: true }> & { key: Bucket; principal: Bucket });

/** The burst each bucket allows: one second's worth of its rate. */
export const BURST_MS = 1_000;
/**
 * The part of the key's burst kept for principals well within their share (their own bucket at
 * least half free): however many principals are busy, a light one finds room at once.
 */
export const LIGHT_RESERVE = 0.25;
/** A 429 halves the rate of the principal whose request drew it... */
export const PRINCIPAL_DECREASE = 0.5;
/** ...and lowers the key's by a fifth: the principal is slowed first and most. */
export const KEY_DECREASE = 0.8;
/** Floors of the learnt factors: a run of 429s never stops a principal or the key altogether. */
export const PRINCIPAL_FLOOR = 0.125;
export const KEY_FLOOR = 0.1;
/** Recovery after the cooldown: a quarter of the configured rate back each minute. */
export const RECOVERY_PER_MS = 0.25 / 60_000;
/** How often a request waiting for an in-flight slot on another replica looks again. */
export const IN_FLIGHT_POLL_MS = 50;

/** The learnt factor now: recovering linearly once the cooldown that lowered it has passed. */
export function factorAt(bucket: Bucket, now: number): number {
  return Math.min(1, bucket.factor + Math.max(0, now - bucket.learntAt) * RECOVERY_PER_MS);
}

/** Milliseconds between requests of the key, and of one principal, with what was learnt. */
export function intervals(
  limits: ShareLimits,
  keyFactor: number,
  principalFactor: number,
): { key: number; principal: number } {
  const key = 60_000 / (limits.perMinute * keyFactor);
  return { key, principal: key / (limits.share * principalFactor) };
}

/**
 * Whether one more upstream request of this principal may go now. `inFlight` is the
 * principal's requests under way (fleet-wide on Redis; a process counts its own before asking).
 */
export function decide(
  limits: ShareLimits,
  key: Bucket,
  principal: Bucket,
  inFlight: number,
  now: number,
): Decision {
  const keyFactor = factorAt(key, now);
  const step = intervals(limits, keyFactor, factorAt(principal, now));
  const seen = { intervalMs: step.principal, keyFactor };
  if (inFlight >= limits.maxInFlight)
    return { go: false, waitMs: IN_FLIGHT_POLL_MS, reason: "in_flight", ...seen };
  const principalTolerance = Math.max(0, BURST_MS - step.principal);
  const principalBacklog = Math.max(principal.tat, now) - now;
  if (principalBacklog > principalTolerance)
    return {
      go: false,
      waitMs: principalBacklog - principalTolerance,
      reason: "client_share",
      ...seen,
    };
  const keyTolerance = Math.max(0, BURST_MS - step.key);
  const light = principalBacklog <= principalTolerance / 2;
  const keyAllowed = light ? keyTolerance : keyTolerance * (1 - LIGHT_RESERVE);
  const keyBacklog = Math.max(key.tat, now) - now;
  if (keyBacklog > keyAllowed)
    return { go: false, waitMs: keyBacklog - keyAllowed, reason: "key_rate", ...seen };
  return {
    go: true,
    key: { ...key, tat: Math.max(key.tat, now) + step.key },
    principal: { ...principal, tat: Math.max(principal.tat, now) + step.principal },
    ...seen,
  };
}

/**
 * A 429 (with its Retry-After, in ms) lowers a bucket's factor, once per cooldown: 429s that
 * arrive while the first one's cooldown runs were sent before anyone knew, and teach nothing.
 */
export function learn(
  bucket: Bucket,
  retryAfterMs: number,
  decrease: number,
  floor: number,
  now: number,
): Bucket {
  if (bucket.learntAt > now) return bucket;
  return {
    ...bucket,
    factor: Math.max(floor, factorAt(bucket, now) * decrease),
    learntAt: now + retryAfterMs,
  };
}

/** Whether a bucket holds nothing worth keeping: nothing owed, nothing learnt still in force. */
export function idle(bucket: Bucket, now: number): boolean {
  return bucket.tat <= now && factorAt(bucket, now) >= 1;
}
