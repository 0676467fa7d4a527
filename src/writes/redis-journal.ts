import type { Logger } from "../log.js";
import type { FleetCheck } from "../state/fleet-check.js";
import type { SharedRedis } from "../state/redis.js";
import type { Intent } from "./intent.js";
import type { IntentMac } from "./intent-mac.js";
import {
  DamagedIntent,
  type DeliveryLease,
  FINISHED_RETENTION_MS,
  type IntentStore,
  type OnQuarantine,
  SET_ASIDE,
  trust,
  UNSENT_DRAFT_GRACE_MS,
} from "./journal.js";
import { RedisQuarantine } from "./redis-quarantine.js";

const ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;
/** Abandoned deliveries taken up per look: the rest wait for the next one. */
const ABANDONED_BATCH = 100;

/*
 * Layout, under the deployment's prefix:
 *   intent:<id>        hash { doc: the intent's JSON as the gate wrote it, rev: its revision },
 *                      expiring on its own: a draft shortly after its confirmation deadline, a
 *                      finished write after a week; a confirmed, unfinished one never
 *   intent-lease:<id>  the owner delivering it, expiring on its own (PX)
 *   intents-open       sorted set of the confirmed, unfinished intents (sending, uncertain): the
 *                      score is when the delivery lease runs out (Redis's clock, ms), +inf for an
 *                      uncertain one nobody is sending. Startup reads it all; the periodic look
 *                      for abandoned deliveries reads only the scores that have passed
 *   intents-quarantine hash <id>.<ms> -> the damaged document, for a person to look at
 * Drafts and finished writes are in no index: they are read by id and expire by TTL, on every
 * replica at once, whichever replica made them and whether or not it still runs.
 * The document is stored as written, never re-encoded by a script (Lua's cjson would turn []
 * into {} and round large numbers, and the MAC would then refuse the write). Every document
 * carries its MAC: an entry written by anyone without the fleet's state secret is quarantined,
 * never delivered.
 */

/**
 * Shared by the scripts: the intent key's expiry (ttl ms, 0 for none) and its place in the
 * open set. mode: "lease" (sending, score = now + lease), "now" (sending with no lease: due at
 * once), "hold" (uncertain: +inf), "" (not open).
 */
const KEEP = `
local function keep(key, open, id, mode, ttl, leaseMs)
  if tonumber(ttl) > 0 then redis.call('PEXPIRE', key, ttl) else redis.call('PERSIST', key) end
  if mode == '' then
    redis.call('ZREM', open, id)
    return
  end
  local score = '+inf'
  if mode ~= 'hold' then
    local t = redis.call('TIME')
    score = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    if mode == 'lease' then score = score + tonumber(leaseMs) end
  end
  redis.call('ZADD', open, score, id)
end`;

/**
 * KEYS: intent, lease, open. ARGV: doc, expected rev, owner ("" for none), lease ms, id, mode,
 * ttl ms.
 */
const REPLACE = `${KEEP}
local rev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')
if rev ~= tonumber(ARGV[2]) then return -1 end
if ARGV[3] ~= '' then
  local holder = redis.call('GET', KEYS[2])
  if holder and holder ~= ARGV[3] then return -2 end
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
end
rev = rev + 1
redis.call('HSET', KEYS[1], 'doc', ARGV[1], 'rev', rev)
keep(KEYS[1], KEYS[3], ARGV[5], ARGV[6], ARGV[7], ARGV[4])
return rev`;

/** KEYS: intent, lease, open. ARGV: doc, owner, id, mode, ttl ms. Only the lease holder settles. */
const SETTLE = `${KEEP}
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return -2 end
local rev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') + 1
redis.call('HSET', KEYS[1], 'doc', ARGV[1], 'rev', rev)
redis.call('DEL', KEYS[2])
keep(KEYS[1], KEYS[3], ARGV[3], ARGV[4], ARGV[5], 0)
return rev`;

/** KEYS: lease, open. ARGV: owner, ms, id. The open set's deadline moves with the lease. */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[2]), ARGV[3])
return 1`;

/** KEYS: lease, open. ARGV: owner, id. The owner's lease goes; the write is due at once. */
const RELINQUISH = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
local t = redis.call('TIME')
redis.call('ZADD', KEYS[2], 'XX', tonumber(t[1]) * 1000, ARGV[2])
return 1`;

/** KEYS: intent, open. ARGV: doc, id, mode, ttl ms. A plain write that still counts a revision. */
const SAVE = `${KEEP}
local rev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') + 1
redis.call('HSET', KEYS[1], 'doc', ARGV[1], 'rev', rev)
keep(KEYS[1], KEYS[2], ARGV[2], ARGV[3], ARGV[4], 0)
return rev`;

/** KEYS: open. ARGV: batch. Ids whose delivery lease has run out, on Redis's clock. */
const LAPSED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))`;

/**
 * The intent journal on Redis, shared by every replica: a draft made on one is confirmed on
 * another, each change is a compare-and-set in one script (atomic on the server), and the
 * delivery lease lets exactly one process send at a time. Every command has a deadline
 * (SharedRedis.run): a Redis that went away fails the call with one sentence, and since a
 * write is claimed in the journal before it is sent, nothing is sent unrecorded. Durability is
 * Redis's: run it with AOF (appendonly yes, appendfsync everysec or always) or a confirmed
 * write may be forgotten.
 */
export class RedisJournal implements IntentStore {
  private readonly aside: RedisQuarantine;

  /**
   * `mac`: the intents' MAC key, derived from the fleet's shared PORTFOLIO_STATE_SECRET.
   * `fleet`: checked before anything is quarantined: a replica with another secret would take
   * every intent of the fleet for a forgery.
   */
  constructor(
    private readonly redis: SharedRedis,
    private readonly mac: IntentMac,
    options: { logger?: Logger; onQuarantine?: OnQuarantine; fleet?: FleetCheck } = {},
  ) {
    const keysOf = (id: string): [string, string, string] => [
      this.intentKey(id),
      this.leaseKey(id),
      this.open,
    ];
    this.aside = new RedisQuarantine(redis, keysOf, options);
  }

  /** Entries this replica moved to quarantine since it started. */
  get quarantined(): number {
    return this.aside.count;
  }

  /** The confirmed writes not finished yet (sending, uncertain): what a start must finish. */
  async load(): Promise<Intent[]> {
    const ids = await this.redis.run((c) => c.zRange(this.open, 0, -1), "journal.load");
    return this.readAll(ids);
  }

  async abandoned(): Promise<Intent[]> {
    const ids = (await this.redis.run(
      (c) => c.eval(LAPSED, { keys: [this.open], arguments: [String(ABANDONED_BATCH)] }),
      "journal.abandoned",
    )) as string[];
    return (await this.readAll(ids)).filter((i) => i.state === "sending");
  }

  /** The intent, null when there is none; a damaged one is quarantined and thrown. */
  async read(id: string): Promise<Intent | null> {
    if (!ID_PATTERN.test(id)) return null;
    const stored = await this.redis.run((c) => c.hGetAll(this.intentKey(id)), "journal.read");
    if (stored.doc === undefined) {
      // Set aside earlier (by this replica or another): damaged, not unknown.
      if (await this.aside.holds(id)) throw new DamagedIntent(id, SET_ASIDE);
      return null;
    }
    const intent = this.trusted(id, stored);
    if (typeof intent !== "string") return intent;
    const otherSecret = await this.aside.setAside(id, intent, stored.doc);
    throw otherSecret ? new DamagedIntent(id, otherSecret, false) : new DamagedIntent(id, intent);
  }

  async save(intent: Intent): Promise<void> {
    this.checkId(intent.id);
    await this.redis.run(
      (c) =>
        c.eval(SAVE, {
          keys: [this.intentKey(intent.id), this.open],
          arguments: [this.document(intent), intent.id, openMode(intent), String(ttlMs(intent))],
        }),
      "journal.save",
    );
  }

  async replace(next: Intent, expected: number, lease?: DeliveryLease): Promise<Intent | null> {
    this.checkId(next.id);
    const rev = Number(
      await this.redis.run(
        (c) =>
          c.eval(REPLACE, {
            keys: [this.intentKey(next.id), this.leaseKey(next.id), this.open],
            arguments: [
              this.document(next),
              String(expected),
              lease?.owner ?? "",
              String(lease?.ms ?? 0),
              next.id,
              openMode(next, lease),
              String(ttlMs(next)),
            ],
          }),
        "journal.replace",
      ),
    );
    return rev > 0 ? { ...next, revision: rev } : null;
  }

  // Beside replace rather than folded with it: the two scripts take different arguments, and
  // a shared runner reads worse than the two calls (and takes the class past 200 lines).
  async settle(next: Intent, owner: string): Promise<Intent | null> {
    this.checkId(next.id);
    const rev = Number(
      await this.redis.run(
        (c) =>
          c.eval(SETTLE, {
            keys: [this.intentKey(next.id), this.leaseKey(next.id), this.open],
            arguments: [this.document(next), owner, next.id, openMode(next), String(ttlMs(next))],
          }),
        "journal.settle",
      ),
    );
    return rev > 0 ? { ...next, revision: rev } : null;
  }

  async renew(id: string, lease: DeliveryLease): Promise<boolean> {
    const held = await this.redis.run(
      (c) =>
        c.eval(RENEW, {
          keys: [this.leaseKey(id), this.open],
          arguments: [lease.owner, String(lease.ms), id],
        }),
      "journal.renew",
    );
    return Number(held) === 1;
  }

  async relinquish(id: string, owner: string): Promise<void> {
    // Sent after the claim on the same connection, so Redis runs it after the claim, whatever
    // became of the claim's answer. Its own answer may be slow too: it is not waited for long.
    await this.redis.run(
      (c) => c.eval(RELINQUISH, { keys: [this.leaseKey(id), this.open], arguments: [owner, id] }),
      "journal.relinquish",
    );
  }

  async remove(id: string): Promise<void> {
    if (!ID_PATTERN.test(id)) return;
    await this.redis.run(
      (c) =>
        c
          .multi()
          .del([this.intentKey(id), this.leaseKey(id)])
          .zRem(this.open, id)
          .exec(),
      "journal.remove",
    );
  }

  /** The process that holds an intent's delivery lease, if any (for tests and doctor). */
  async leaseHolder(id: string): Promise<string | null> {
    return this.redis.run((c) => c.get(this.leaseKey(id)), "journal.lease");
  }

  /** The intents of these ids; damaged ones go to quarantine, vanished ones leave the index. */
  private async readAll(ids: string[]): Promise<Intent[]> {
    const intents: Intent[] = [];
    for (const id of ids) {
      const stored = await this.redis.run((c) => c.hGetAll(this.intentKey(id)), "journal.read");
      if (stored.doc === undefined) {
        await this.redis.run((c) => c.zRem(this.open, id), "journal.forget"); // removed meanwhile
        continue;
      }
      const intent = this.trusted(id, stored);
      if (typeof intent !== "string") {
        intents.push(intent);
        continue;
      }
      await this.aside.setAside(id, intent, stored.doc);
    }
    return intents;
  }

  private trusted(id: string, stored: Record<string, string>): Intent | string {
    const intent = trust(stored.doc ?? "", `${id}.json`, this.mac);
    if (typeof intent === "string") return intent;
    const rev = Number(stored.rev);
    if (!Number.isInteger(rev) || rev < 1) return "its revision is missing or not a number";
    return { ...intent, revision: rev };
  }

  /** The stored JSON, with its MAC; the revision lives beside it, where the scripts compare it. */
  private document(intent: Intent): string {
    const { revision: _revision, ...rest } = this.mac.signed(intent);
    return JSON.stringify(rest);
  }

  private checkId(id: string): void {
    if (!ID_PATTERN.test(id)) throw new Error(`refusing to store intent id ${id}`);
  }

  private get open(): string {
    return this.redis.key("intents-open");
  }

  private intentKey(id: string): string {
    return this.redis.key(`intent:${id}`);
  }

  private leaseKey(id: string): string {
    return this.redis.key(`intent-lease:${id}`);
  }
}

/** Where an intent stands in the open set (see KEEP). */
function openMode(intent: Intent, lease?: DeliveryLease): string {
  if (intent.state === "sending") return lease ? "lease" : "now";
  return intent.state === "uncertain" ? "hold" : "";
}

/**
 * How long Redis keeps an intent, in ms (0: until removed). A draft lives a little past its
 * deadline, so a confirmation arriving just after it is told it expired rather than unknown;
 * a confirmed write is kept until it is finished, whatever happens to the replicas.
 */
function ttlMs(intent: Intent): number {
  switch (intent.state) {
    case "pending": {
      const left = Date.parse(intent.expiresAt) - Date.now() + UNSENT_DRAFT_GRACE_MS;
      return Number.isFinite(left) ? Math.max(1_000, left) : FINISHED_RETENTION_MS;
    }
    case "expired":
    case "cancelled":
      return UNSENT_DRAFT_GRACE_MS;
    case "sending":
    case "uncertain":
      return 0;
    default:
      return FINISHED_RETENTION_MS;
  }
}
