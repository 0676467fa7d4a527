import type { StateKeys } from "./keys.js";
import type { SharedRedis } from "./redis.js";

/**
 * Whether this replica holds the fleet's state secret. The first replica to start writes a
 * value made with its key (it reveals nothing of the key); each replica compares its own with
 * it. A replica with another secret could verify none of the fleet's intents and would take
 * them all for forgeries: it must not be ready, and must not quarantine anything.
 */
export class FleetCheck {
  private readonly key: string;
  private readonly value: string;

  constructor(
    private readonly redis: SharedRedis,
    keys: StateKeys,
  ) {
    this.key = redis.key("fleet-check");
    this.value = keys.fleetCheck();
  }

  /** true: same secret as the fleet (or the first replica here, which sets it); false: another. */
  async same(): Promise<boolean> {
    const stored = await this.redis.run(async (c) => {
      await c.set(this.key, this.value, { condition: "NX" });
      return c.get(this.key);
    });
    return stored === this.value;
  }

  /** Like `same`, but changes nothing: "none" while no replica has written the value yet. */
  async peek(): Promise<"same" | "different" | "none"> {
    const stored = await this.redis.run((c) => c.get(this.key));
    return stored === null ? "none" : stored === this.value ? "same" : "different";
  }

  /** Why this replica cannot take part, in one sentence, or null when it can. */
  async problem(): Promise<string | null> {
    if (await this.same()) return null;
    return this.mismatch();
  }

  /** The sentence for a replica whose secret is not the fleet's. */
  mismatch(): string {
    return `this replica's PORTFOLIO_STATE_SECRET differs from the one the other replicas sharing ${this.redis.prefix} on Redis use (the check value ${this.key} was made with another key): it cannot verify their drafted writes; give every replica the same secret (to change the secret for the whole fleet, stop every replica, delete ${this.key}, then start them all with the new one)`;
  }
}
