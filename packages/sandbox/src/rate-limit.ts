import type { Clock } from "./clock.js";
import { Problem } from "./problem.js";

export interface RateLimitSettings {
  /** Requests a key may send at once. */
  burst: number;
  /** Sustained requests per second per key. */
  perSecond: number;
  /** Requests sent during a cooldown before it turns into a ban (the spec's progressive ban). */
  banAfterStrikes: number;
  banSeconds: number;
}

interface Bucket {
  tokens: number;
  refilledAt: number;
  cooldownUntil: number;
  strikes: number;
}

/**
 * A token bucket per key. An empty bucket starts a cooldown announced by `Retry-After`; a
 * client that keeps sending during the cooldown collects strikes and is then banned for longer.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly clock: Clock,
  ) {}

  take(keyId: string): void {
    const now = this.clock.now();
    const bucket = this.buckets.get(keyId) ?? {
      tokens: this.settings.burst,
      refilledAt: now,
      cooldownUntil: 0,
      strikes: 0,
    };
    this.buckets.set(keyId, bucket);

    if (now < bucket.cooldownUntil) {
      bucket.strikes++;
      if (bucket.strikes >= this.settings.banAfterStrikes) {
        bucket.cooldownUntil = Math.max(
          bucket.cooldownUntil,
          now + this.settings.banSeconds * 1000,
        );
      }
      throw tooManyRequests(
        bucket.cooldownUntil - now,
        bucket.strikes >= this.settings.banAfterStrikes,
      );
    }

    const elapsedSeconds = (now - bucket.refilledAt) / 1000;
    bucket.tokens = Math.min(
      this.settings.burst,
      bucket.tokens + elapsedSeconds * this.settings.perSecond,
    );
    bucket.refilledAt = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      bucket.strikes = 0;
      return;
    }
    const waitMs = Math.ceil(((1 - bucket.tokens) / this.settings.perSecond) * 1000);
    bucket.cooldownUntil = now + Math.ceil(waitMs / 1000) * 1000;
    throw tooManyRequests(bucket.cooldownUntil - now, false);
  }
}

export function tooManyRequests(waitMs: number, banned: boolean): Problem {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new Problem(
    429,
    banned
      ? `Too many requests during the cooldown: this key is banned for ${seconds} s.`
      : `Rate limit exceeded; retry in ${seconds} s.`,
    {
      reasonCode: banned ? "rate_limit_ban" : "rate_limit_exceeded",
      headers: { "Retry-After": String(seconds) },
    },
  );
}
