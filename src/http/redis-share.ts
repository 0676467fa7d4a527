import { createHash } from "node:crypto";
import type { Logger } from "../log.js";
import type { RedisClient, SharedRedis } from "../state/redis.js";
import {
  BURST_MS,
  IN_FLIGHT_POLL_MS,
  KEY_DECREASE,
  KEY_FLOOR,
  LIGHT_RESERVE,
  PRINCIPAL_DECREASE,
  PRINCIPAL_FLOOR,
  RECOVERY_PER_MS,
  type ShareLimits,
  type Verdict,
  type WaitReason,
} from "./share-math.js";
import { LocalShareStore, type ShareStore } from "./share-store.js";

/** Buckets nobody touched for this long are dropped (a learnt factor has long recovered). */
const BUCKET_TTL_MS = 600_000;
/** After Redis failed, this replica counts alone this long before asking Redis again. */
const ALONE_AFTER_FAILURE_MS = 5_000;

/** The clock both scripts use: Redis's (replicas' clocks need not agree), or a test's. */
const NOW = `
local now
if ARGV[#ARGV] ~= '' then now = tonumber(ARGV[#ARGV]) else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function fmt(x) return string.format('%.17g', x) end
local function factor(f, a) return math.min(1, f + math.max(0, now - a) * ${RECOVERY_PER_MS}) end`;

/**
 * share-math.ts's `decide`, on Redis. KEYS: key bucket, principal bucket, in-flight set.
 * ARGV: per minute, share, max in flight, member, lease ms, now ('' for Redis's clock).
 * Returns go (1/0), wait ms, reason, the principal's interval, the key's factor, as strings.
 */
const TAKE = `${NOW}
local perMinute, share, maxInFlight = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k = redis.call('HMGET', KEYS[1], 't', 'f', 'a')
local p = redis.call('HMGET', KEYS[2], 't', 'f', 'a')
local kt, ka = tonumber(k[1]) or 0, tonumber(k[3]) or 0
local pt, pa = tonumber(p[1]) or 0, tonumber(p[3]) or 0
local keyFactor = factor(tonumber(k[2]) or 1, ka)
local keyStep = 60000 / (perMinute * keyFactor)
local step = keyStep / (share * factor(tonumber(p[2]) or 1, pa))
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[3]) >= maxInFlight then
  return {'0', '${IN_FLIGHT_POLL_MS}', 'in_flight', fmt(step), fmt(keyFactor)}
end
local pTolerance = math.max(0, ${BURST_MS} - step)
local pBacklog = math.max(pt, now) - now
if pBacklog > pTolerance then
  return {'0', fmt(pBacklog - pTolerance), 'client_share', fmt(step), fmt(keyFactor)}
end
local kAllowed = math.max(0, ${BURST_MS} - keyStep)
if pBacklog > pTolerance / 2 then kAllowed = kAllowed * ${1 - LIGHT_RESERVE} end
local kBacklog = math.max(kt, now) - now
if kBacklog > kAllowed then
  return {'0', fmt(kBacklog - kAllowed), 'key_rate', fmt(step), fmt(keyFactor)}
end
redis.call('HSET', KEYS[1], 't', fmt(math.max(kt, now) + keyStep))
redis.call('HSET', KEYS[2], 't', fmt(math.max(pt, now) + step))
redis.call('PEXPIRE', KEYS[1], math.ceil(math.max(${BUCKET_TTL_MS}, ka - now + ${BUCKET_TTL_MS})))
redis.call('PEXPIRE', KEYS[2], math.ceil(math.max(${BUCKET_TTL_MS}, pa - now + ${BUCKET_TTL_MS})))
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[5]), ARGV[4])
redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[5]))
return {'1', '0', '', fmt(step), fmt(keyFactor)}`;

/**
 * share-math.ts's `learn`, on Redis, for the key and the principal whose request drew the 429.
 * KEYS: key bucket, principal bucket. ARGV: Retry-After ms, now ('' for Redis's clock).
 */
const LEARN = `${NOW}
local function learn(key, decrease, floor)
  local v = redis.call('HMGET', key, 'f', 'a')
  local a = tonumber(v[2]) or 0
  if a > now then return end
  local f = math.max(floor, factor(tonumber(v[1]) or 1, a) * decrease)
  local ends = now + tonumber(ARGV[1])
  redis.call('HSET', key, 'f', fmt(f), 'a', fmt(ends))
  redis.call('PEXPIRE', key, math.ceil(ends - now + ${BUCKET_TTL_MS}))
end
learn(KEYS[1], ${KEY_DECREASE}, ${KEY_FLOOR})
learn(KEYS[2], ${PRINCIPAL_DECREASE}, ${PRINCIPAL_FLOOR})
return 1`;

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");
const SCRIPTS = { take: { text: TAKE, sha: sha1(TAKE) }, learn: { text: LEARN, sha: sha1(LEARN) } };

/**
 * The buckets of a fleet, on its Redis: one key bucket per API key, one bucket and one set of
 * in-flight requests per principal, each decision one script on Redis's clock. An in-flight
 * request is a member of a sorted set scored by its lease's end, so the slots of a replica that
 * dies lapse on their own. When Redis fails, this replica counts alone (its own buckets, its
 * own in-flight requests) with one warning, and asks Redis again after a few seconds: reads go
 * on, at worst each replica sending the whole key's rate until Redis is back, and a 429 then
 * still stops everyone through the cooldown.
 */
export class RedisShareStore implements ShareStore {
  private readonly local: LocalShareStore;
  private readonly base: string;
  private aloneUntil = 0;
  /** Whether this outage was reported: one line for it, however long it lasts. */
  private warned = false;
  private learntKeyFactor = 1;

  constructor(
    private readonly redis: SharedRedis,
    private readonly limits: ShareLimits,
    identity: { baseUrl: string; keyId: string },
    /** How long an in-flight request holds its slot at most (the replica may die). */
    private readonly leaseMs: number,
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
    /** Tests only: the time the scripts use instead of Redis's. */
    private readonly scriptNow: (() => number) | null = null,
  ) {
    this.local = new LocalShareStore(limits, clock);
    const key = createHash("sha256")
      .update(`${identity.baseUrl}\n${identity.keyId}`)
      .digest("hex")
      .slice(0, 32);
    // One hash tag: the three keys of a decision sit in one slot of a Redis Cluster.
    this.base = redis.key(`upstream:{${key}}`);
  }

  get keyFactor(): number {
    return this.counting() ? this.learntKeyFactor : this.local.keyFactor;
  }

  async take(principal: string, member: string): Promise<Verdict> {
    if (!this.counting()) return this.local.takeNow(principal);
    const [key, bucket, flight] = this.keys(principal);
    try {
      const reply = (await this.run(
        "take",
        [key, bucket, flight],
        [
          String(this.limits.perMinute),
          String(this.limits.share),
          String(this.limits.maxInFlight),
          member,
          String(this.leaseMs),
        ],
      )) as string[];
      const [go, waitMs, reason, intervalMs, keyFactor] = reply.map(String);
      this.learntKeyFactor = Number(keyFactor);
      this.warned = false;
      const seen = { intervalMs: Number(intervalMs), keyFactor: this.learntKeyFactor };
      return go === "1"
        ? { go: true, ...seen }
        : { go: false, waitMs: Number(waitMs), reason: reason as WaitReason, ...seen };
    } catch (error) {
      this.fail(error);
      return this.local.takeNow(principal);
    }
  }

  release(principal: string, member: string): void {
    if (!this.counting()) return;
    const [, , flight] = this.keys(principal);
    this.redis.run((c) => c.zRem(flight, member)).catch(() => {}); // else its lease lapses
  }

  throttled(principal: string, retryAfterMs: number): void {
    this.local.throttled(principal, retryAfterMs);
    if (!this.counting()) return;
    const [key, bucket] = this.keys(principal);
    this.run("learn", [key, bucket], [String(Math.ceil(retryAfterMs))]).catch((error: unknown) =>
      this.fail(error),
    );
  }

  private counting(): boolean {
    return this.clock() >= this.aloneUntil;
  }

  private fail(error: unknown): void {
    if (!this.warned)
      this.logger.warn(
        { err: (error as Error).message },
        "cannot share the API key's rate with the other replicas; this one counts alone for now",
      );
    this.warned = true;
    this.aloneUntil = this.clock() + ALONE_AFTER_FAILURE_MS;
  }

  /** Principal names go into keys hashed: the keys show nobody's name. */
  private keys(principal: string): [string, string, string] {
    const id = createHash("sha256").update(principal).digest("hex").slice(0, 32);
    return [`${this.base}:key`, `${this.base}:p:${id}`, `${this.base}:p:${id}:flight`];
  }

  /** One script by its digest, loaded on first use (and again after a Redis restart). */
  private run(name: keyof typeof SCRIPTS, keys: string[], args: string[]): Promise<unknown> {
    const script = SCRIPTS[name];
    const options = {
      keys,
      arguments: [...args, this.scriptNow ? String(this.scriptNow()) : ""],
    };
    return this.redis.run(async (c: RedisClient) => {
      try {
        return await c.evalSha(script.sha, options);
      } catch (error) {
        if (!String((error as Error).message).startsWith("NOSCRIPT")) throw error;
        return c.eval(script.text, options);
      }
    });
  }
}
