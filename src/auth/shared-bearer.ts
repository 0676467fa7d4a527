import { createHash, randomBytes } from "node:crypto";
import type { SharedRedis } from "../state/redis.js";
import { bearerKey, openBearer, sealBearer } from "./bearer-seal.js";

/** A bearer as the token manager keeps it. */
export interface Bearer {
  token: string;
  expiresAtMs: number;
  renewAtMs: number;
}

/** The renewal lock, as held: its value carries the fencing token. */
export interface RenewalLock {
  value: string;
  fence: number;
}

/**
 * One bearer per (base URL, key id) for every process that shares the store, and the lock that
 * makes its renewal single-flight across them (spec part 5, rule 3).
 */
export interface SharedBearerStore {
  read(): Promise<Bearer | null>;
  /** The renewal lock, or null when another process holds it (until its lease runs out). */
  lock(): Promise<RenewalLock | null>;
  /** Stores the new bearer only while `lock` is still held (a fencing check); false otherwise. */
  publish(bearer: Bearer, lock: RenewalLock): Promise<boolean>;
  unlock(lock: RenewalLock): Promise<void>;
  /** Drops the stored bearer if it is still `token`: a 401 drops only the bearer that failed. */
  drop(token: string): Promise<void>;
}

/** KEYS: lock, bearer. ARGV: lock value, sealed bearer, ttl ms. */
const PUBLISH = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1`;
/** KEYS: key. ARGV: value. Deletes the key only if it still holds the value. */
const DELETE_IF = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;

/**
 * The shared bearer on Redis, encrypted with a key derived from the API secret. The lock is a
 * SET NX PX with a lease (a process that dies holding it blocks renewal for the lease at most)
 * and a fencing token from a counter, so a holder whose lease ran out cannot publish over the
 * bearer of the one that took over.
 */
export class RedisBearerStore implements SharedBearerStore {
  private readonly key: Buffer;
  private readonly context: string;
  private readonly bearerKeyName: string;
  private readonly lockKeyName: string;
  private readonly fenceKeyName: string;
  private readonly owner = randomBytes(9).toString("base64url");

  constructor(
    private readonly redis: SharedRedis,
    identity: { baseUrl: string; keyId: string; secret: string },
    private readonly lockLeaseMs = 15_000,
  ) {
    this.key = bearerKey(identity.secret, identity.baseUrl, identity.keyId);
    this.context = `${identity.baseUrl}\n${identity.keyId}`;
    // The key names show neither the API nor the key id.
    const id = createHash("sha256").update(this.context).digest("hex").slice(0, 32);
    this.bearerKeyName = redis.key(`bearer:${id}`);
    this.lockKeyName = redis.key(`bearer-lock:${id}`);
    this.fenceKeyName = redis.key(`bearer-fence:${id}`);
  }

  async read(): Promise<Bearer | null> {
    const sealed = await this.redis.run((c) => c.get(this.bearerKeyName), "bearer.read");
    return sealed ? this.open(sealed) : null;
  }

  async lock(): Promise<RenewalLock | null> {
    const fence = Number(await this.redis.run((c) => c.incr(this.fenceKeyName), "bearer.fence"));
    const value = `${this.owner}:${fence}`;
    const taken = await this.redis.run(
      (c) =>
        c.set(this.lockKeyName, value, {
          condition: "NX",
          expiration: { type: "PX", value: this.lockLeaseMs },
        }),
      "bearer.lock",
    );
    return taken === "OK" ? { value, fence } : null;
  }

  async publish(bearer: Bearer, lock: RenewalLock): Promise<boolean> {
    const ttl = Math.floor(bearer.expiresAtMs - Date.now());
    if (ttl <= 0) return false;
    const sealed = sealBearer(this.key, JSON.stringify(bearer), this.context);
    const done = await this.redis.run(
      (c) =>
        c.eval(PUBLISH, {
          keys: [this.lockKeyName, this.bearerKeyName],
          arguments: [lock.value, sealed, String(ttl)],
        }),
      "bearer.publish",
    );
    return Number(done) === 1;
  }

  async unlock(lock: RenewalLock): Promise<void> {
    await this.redis.run(
      (c) => c.eval(DELETE_IF, { keys: [this.lockKeyName], arguments: [lock.value] }),
      "bearer.unlock",
    );
  }

  async drop(token: string): Promise<void> {
    const sealed = await this.redis.run((c) => c.get(this.bearerKeyName), "bearer.read");
    if (!sealed || this.open(sealed)?.token !== token) return;
    await this.redis.run(
      (c) => c.eval(DELETE_IF, { keys: [this.bearerKeyName], arguments: [sealed] }),
      "bearer.drop",
    );
  }

  private open(sealed: string): Bearer | null {
    const text = openBearer(this.key, sealed, this.context);
    if (text === null) return null; // another secret's, or damaged: as if none
    try {
      const value = JSON.parse(text) as Bearer;
      return typeof value.token === "string" && Number.isFinite(value.expiresAtMs) ? value : null;
    } catch {
      return null;
    }
  }
}
