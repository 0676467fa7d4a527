import type { Logger } from "../log.js";
import type { SharedRedis } from "../state/redis.js";
import type { Intent } from "./intent.js";
import { type DeliveryLease, type IntentStore, recoverable, trust } from "./journal.js";

const ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

/*
 * Layout, under the deployment's prefix:
 *   intent:<id>        hash { doc: the intent's JSON as the gate wrote it, rev: its revision }
 *   intent-lease:<id>  the owner delivering it, expiring on its own (PX)
 *   intents            set of every stored id, for load()
 *   intents-quarantine hash <id>.<ms> -> the damaged document, for a person to look at
 * The document is stored as written, never re-encoded by a script (Lua's cjson would turn []
 * into {} and round large numbers, and the digest check would then refuse the write).
 */

/** KEYS: intent, lease, index. ARGV: doc, expected rev, owner ("" for none), lease ms, id. */
const REPLACE = `
local rev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')
if rev ~= tonumber(ARGV[2]) then return -1 end
if ARGV[3] ~= '' then
  local holder = redis.call('GET', KEYS[2])
  if holder and holder ~= ARGV[3] then return -2 end
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
end
rev = rev + 1
redis.call('HSET', KEYS[1], 'doc', ARGV[1], 'rev', rev)
redis.call('SADD', KEYS[3], ARGV[5])
return rev`;

/** KEYS: intent, lease. ARGV: doc, owner. Only the lease holder records the outcome. */
const SETTLE = `
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return -2 end
local rev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') + 1
redis.call('HSET', KEYS[1], 'doc', ARGV[1], 'rev', rev)
redis.call('DEL', KEYS[2])
return rev`;

/** KEYS: lease. ARGV: owner, ms. */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** KEYS: intent, index. ARGV: doc, id. A plain write that still counts a revision. */
const SAVE = `
local rev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0') + 1
redis.call('HSET', KEYS[1], 'doc', ARGV[1], 'rev', rev)
redis.call('SADD', KEYS[2], ARGV[2])
return rev`;

/**
 * The intent journal on Redis, shared by every replica: a draft made on one is confirmed on
 * another, each change is a compare-and-set in one script (atomic on the server), and the
 * delivery lease lets exactly one process send at a time. Durability is Redis's: run it with
 * AOF (appendonly yes, appendfsync everysec or always) or a confirmed write may be forgotten.
 */
export class RedisJournal implements IntentStore {
  /** Entries moved to quarantine by the last load. */
  quarantined = 0;

  constructor(
    private readonly redis: SharedRedis,
    private readonly logger?: Logger,
  ) {}

  async load(): Promise<Intent[]> {
    this.quarantined = 0;
    const intents: Intent[] = [];
    const ids = await this.redis.client.sMembers(this.index);
    for (const id of ids) {
      const stored = await this.redis.client.hGetAll(this.intentKey(id));
      if (stored.doc === undefined) {
        await this.redis.client.sRem(this.index, id); // removed meanwhile
        continue;
      }
      const intent = this.trusted(id, stored);
      if (typeof intent !== "string") {
        intents.push(intent);
        continue;
      }
      await this.quarantine(id, intent, stored.doc);
    }
    return intents;
  }

  async read(id: string): Promise<Intent | null> {
    if (!ID_PATTERN.test(id)) return null;
    const stored = await this.redis.client.hGetAll(this.intentKey(id));
    if (stored.doc === undefined) return null;
    const intent = this.trusted(id, stored);
    if (typeof intent !== "string") return intent;
    this.logger?.warn(
      { intent: id, problem: intent },
      "a stored intent cannot be trusted; it is left for the next start to quarantine",
    );
    return null;
  }

  async save(intent: Intent): Promise<void> {
    this.checkId(intent.id);
    await this.redis.client.eval(SAVE, {
      keys: [this.intentKey(intent.id), this.index],
      arguments: [document(intent), intent.id],
    });
  }

  async replace(next: Intent, expected: number, lease?: DeliveryLease): Promise<Intent | null> {
    this.checkId(next.id);
    const rev = Number(
      await this.redis.client.eval(REPLACE, {
        keys: [this.intentKey(next.id), this.leaseKey(next.id), this.index],
        arguments: [
          document(next),
          String(expected),
          lease?.owner ?? "",
          String(lease?.ms ?? 0),
          next.id,
        ],
      }),
    );
    return rev > 0 ? { ...next, revision: rev } : null;
  }

  async settle(next: Intent, owner: string): Promise<Intent | null> {
    this.checkId(next.id);
    const rev = Number(
      await this.redis.client.eval(SETTLE, {
        keys: [this.intentKey(next.id), this.leaseKey(next.id)],
        arguments: [document(next), owner],
      }),
    );
    return rev > 0 ? { ...next, revision: rev } : null;
  }

  async renew(id: string, lease: DeliveryLease): Promise<boolean> {
    const held = await this.redis.client.eval(RENEW, {
      keys: [this.leaseKey(id)],
      arguments: [lease.owner, String(lease.ms)],
    });
    return Number(held) === 1;
  }

  async remove(id: string): Promise<void> {
    if (!ID_PATTERN.test(id)) return;
    await this.redis.client
      .multi()
      .del([this.intentKey(id), this.leaseKey(id)])
      .sRem(this.index, id)
      .exec();
  }

  /** The process that holds an intent's delivery lease, if any (for tests and doctor). */
  async leaseHolder(id: string): Promise<string | null> {
    return this.redis.client.get(this.leaseKey(id));
  }

  private trusted(id: string, stored: Record<string, string>): Intent | string {
    const intent = trust(stored.doc ?? "", `${id}.json`);
    if (typeof intent === "string") return intent;
    const rev = Number(stored.rev);
    if (!Number.isInteger(rev) || rev < 1) return "its revision is missing or not a number";
    return { ...intent, revision: rev };
  }

  /** Moves a damaged entry aside (kept whole for a person) and says what it seemed to hold. */
  private async quarantine(id: string, problem: string, doc: string): Promise<void> {
    const aside = `${id}.${Date.now()}`;
    await this.redis.client
      .multi()
      .hSet(this.redis.key("intents-quarantine"), aside, doc)
      .del([this.intentKey(id), this.leaseKey(id)])
      .sRem(this.index, id)
      .exec();
    this.quarantined++;
    const seen = recoverable(doc);
    this.logger?.error(
      { intent: id, quarantinedAs: aside, problem, ...seen },
      seen.state === "sending" || seen.state === "uncertain"
        ? "quarantined a damaged stored intent of a confirmed write that may not have been delivered: check it by hand"
        : "quarantined a damaged stored intent",
    );
  }

  private checkId(id: string): void {
    if (!ID_PATTERN.test(id)) throw new Error(`refusing to store intent id ${id}`);
  }

  private get index(): string {
    return this.redis.key("intents");
  }

  private intentKey(id: string): string {
    return this.redis.key(`intent:${id}`);
  }

  private leaseKey(id: string): string {
    return this.redis.key(`intent-lease:${id}`);
  }
}

/** The stored JSON; the revision lives beside it, where the scripts can compare it. */
function document(intent: Intent): string {
  const { revision: _revision, ...rest } = intent;
  return JSON.stringify(rest);
}
