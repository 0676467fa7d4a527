import type { Logger } from "../log.js";
import type { FleetCheck } from "../state/fleet-check.js";
import type { SharedRedis } from "../state/redis.js";
import { type OnQuarantine, recoverable } from "./journal.js";

/**
 * KEYS: intent, lease, open, quarantine. ARGV: doc, id, field. Moves the entry aside only if it
 * still holds the document found damaged: when replicas find it at once, one moves it.
 */
const QUARANTINE = `
if redis.call('HGET', KEYS[1], 'doc') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[4], ARGV[3], ARGV[1])
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
return 1`;

/**
 * Where the Redis journal sets damaged entries aside (`intents-quarantine`, kept whole for a
 * person), unless this replica's secret is not the fleet's: it would take every intent of the
 * fleet for a forgery, so it leaves them and says why.
 */
export class RedisQuarantine {
  /** Entries this replica moved to quarantine since it started. */
  count = 0;

  constructor(
    private readonly redis: SharedRedis,
    /** An intent's keys in the journal: its entry, its lease and the open set. */
    private readonly keysOf: (id: string) => [string, string, string],
    private readonly options: { logger?: Logger; onQuarantine?: OnQuarantine; fleet?: FleetCheck },
  ) {}

  /** Whether an entry of this intent was set aside earlier (by this replica or another). */
  async holds(id: string): Promise<boolean> {
    const found = await this.redis.run(
      (c) => c.hScan(this.key, "0", { MATCH: `${id}.*`, COUNT: 1000 }),
      "journal.quarantine",
    );
    return found.entries.length > 0;
  }

  /**
   * Moves a damaged entry aside (kept whole for a person) and says what it seemed to hold; or,
   * on a replica whose secret is not the fleet's, leaves it and returns why.
   */
  async setAside(id: string, problem: string, doc: string): Promise<string | null> {
    const { logger, fleet } = this.options;
    const otherSecret = fleet ? await fleet.problem() : null;
    if (otherSecret) {
      logger?.error(
        { intent: id },
        `an intent did not verify and was left as it is: ${otherSecret}`,
      );
      return otherSecret;
    }
    const aside = `${id}.${Date.now()}`;
    const moved = await this.redis.run(
      (c) =>
        c.eval(QUARANTINE, { keys: [...this.keysOf(id), this.key], arguments: [doc, id, aside] }),
      "journal.quarantine",
    );
    if (Number(moved) !== 1) return null; // another replica moved it first, or it changed
    this.count++;
    this.options.onQuarantine?.("redis", problem);
    const seen = recoverable(doc);
    logger?.error(
      { intent: id, quarantinedAs: aside, problem, ...seen },
      seen.state === "sending" || seen.state === "uncertain"
        ? "quarantined a damaged stored intent of a confirmed write that may not have been delivered: check it by hand"
        : "quarantined a damaged stored intent",
    );
    return null;
  }

  private get key(): string {
    return this.redis.key("intents-quarantine");
  }
}
