import type { RedisSettings } from "../config.js";
import { FleetCheck } from "./fleet-check.js";
import type { StateKeys } from "./keys.js";
import { connectRedis, hostAndPort } from "./redis.js";

/** What `doctor` learns of the Redis several replicas share. */
export interface RedisFacts {
  /** host:port (never the URL: it may hold a password). */
  where: string;
  prefix: string;
  /** Why it could not be reached; the rest is then unknown. */
  unreachable: string | null;
  /** "yes" or "no"; null when the server refuses CONFIG (managed services often do). */
  appendonly: string | null;
  appendfsync: string | null;
  /** Confirmed writes not finished yet, and damaged entries set aside for a person. */
  unfinished: number;
  quarantined: number;
  /**
   * Whether this machine's PORTFOLIO_STATE_SECRET is the fleet's ("none": no replica has run
   * yet); with the sentence to show when it is not. Null without a secret to compare.
   */
  secret: { verdict: "same" | "different" | "none"; mismatch: string } | null;
}

/** Connects once, reads what matters for the shared journal, and disconnects. Changes nothing. */
export async function inspectRedis(
  settings: RedisSettings,
  keys: StateKeys | null,
): Promise<RedisFacts> {
  const facts: RedisFacts = {
    where: hostAndPort(settings.url),
    prefix: settings.prefix,
    unreachable: null,
    appendonly: null,
    appendfsync: null,
    unfinished: 0,
    quarantined: 0,
    secret: null,
  };
  let redis: Awaited<ReturnType<typeof connectRedis>>;
  try {
    redis = await connectRedis(settings);
  } catch (error) {
    facts.unreachable = (error as Error).message.replace(/^PORTFOLIO_REDIS_URL: /, "");
    return facts;
  }
  try {
    await redis.run((c) => c.ping());
    const config = await redis
      .run((c) => c.configGet(["appendonly", "appendfsync"]))
      .catch(() => null);
    facts.appendonly = config?.appendonly ?? null;
    facts.appendfsync = config?.appendfsync ?? null;
    facts.unfinished = await redis.run((c) => c.zCard(redis.key("intents-open")));
    facts.quarantined = await redis.run((c) => c.hLen(redis.key("intents-quarantine")));
    if (keys) {
      const fleet = new FleetCheck(redis, keys);
      facts.secret = { verdict: await fleet.peek(), mismatch: fleet.mismatch() };
    }
  } catch (error) {
    facts.unreachable = (error as Error).message;
  } finally {
    await redis.close().catch(() => {});
  }
  return facts;
}
