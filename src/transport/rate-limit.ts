import { createHash } from "node:crypto";
import type { Logger } from "../log.js";
import type { SharedRedis } from "../state/redis.js";

/** Requests per client: how long to wait before `count` more may pass (0: they pass now). */
export interface RateLimiter {
  take(clientId: string, count: number): Promise<number>;
}

/** A token bucket per client in this process: a minute's allowance, refilled continuously. */
export class LocalRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly clock: () => number = Date.now,
  ) {}

  async take(clientId: string, count: number): Promise<number> {
    return this.takeNow(clientId, count);
  }

  takeNow(clientId: string, count: number): number {
    const now = this.clock();
    const perMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(clientId) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    this.buckets.set(clientId, bucket);
    if (bucket.tokens >= count) {
      bucket.tokens -= count;
      return 0;
    }
    return (count - bucket.tokens) / perMs;
  }
}

/**
 * KEYS: bucket. ARGV: per minute, count. The same bucket on Redis, on Redis's clock (replicas'
 * clocks need not agree). Returns the wait in ms as a string (Lua numbers would be truncated).
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cap = tonumber(ARGV[1])
local perMs = cap / 60000
local tokens = tonumber(redis.call('HGET', KEYS[1], 't') or cap)
local at = tonumber(redis.call('HGET', KEYS[1], 'a') or now)
tokens = math.min(cap, tokens + math.max(0, now - at) * perMs)
local count = tonumber(ARGV[2])
local wait = 0
if tokens >= count then tokens = tokens - count else wait = (count - tokens) / perMs end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'a', tostring(now))
redis.call('PEXPIRE', KEYS[1], 120000)
return tostring(wait)`;

/**
 * The per-client rate counted across every replica: one bucket per client on Redis. If Redis
 * cannot answer, this replica counts alone (with a warning) rather than refuse every request.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly local: LocalRateLimiter;
  private warned = false;

  constructor(
    private readonly redis: SharedRedis,
    private readonly perMinute: number,
    private readonly logger: Logger,
  ) {
    this.local = new LocalRateLimiter(perMinute);
  }

  async take(clientId: string, count: number): Promise<number> {
    // Client names go into the key hashed: the key shows nobody's name.
    const id = createHash("sha256").update(clientId).digest("hex").slice(0, 32);
    try {
      const wait = await this.redis.run((c) =>
        c.eval(TAKE, {
          keys: [this.redis.key(`client-rate:${id}`)],
          arguments: [String(this.perMinute), String(count)],
        }),
      );
      this.warned = false;
      return Number(wait) || 0;
    } catch (error) {
      if (!this.warned)
        this.logger.warn(
          { err: (error as Error).message },
          "cannot count client requests across replicas; this one counts alone",
        );
      this.warned = true;
      return this.local.takeNow(clientId, count);
    }
  }
}
