import { createHash } from "node:crypto";
import type { Logger } from "../log.js";
import type { RedisClient, SharedRedis } from "../state/redis.js";
import type { Cooldown } from "./cooldown.js";

/** KEYS: cooldown. ARGV: ms, channel. Keeps the longer cooldown, tells every replica. */
const ANNOUNCE = `
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
return redis.call('PUBLISH', ARGV[2], ARGV[1])`;

/**
 * The 429 cooldown of one API key, kept by every replica (spec part 7: the API bans a key that
 * keeps knocking, whichever process knocks). A 429 seen here is announced on a channel with its
 * length, and kept in a key that expires with it for replicas that start meanwhile. Lengths,
 * not instants, travel: replicas' clocks need not agree. Calls never wait on Redis: the
 * cooldown stays a local check, updated as announcements arrive.
 */
export class CooldownBroadcast {
  private subscriber: RedisClient | null = null;
  /** Settles once this replica listens (and has taken any cooldown in force). */
  readonly ready: Promise<void>;
  private readonly key: string;
  private readonly channel: string;

  constructor(
    private readonly redis: SharedRedis,
    private readonly cooldown: Cooldown,
    identity: { baseUrl: string; keyId: string },
    private readonly logger: Logger,
  ) {
    const id = createHash("sha256")
      .update(`${identity.baseUrl}\n${identity.keyId}`)
      .digest("hex")
      .slice(0, 32);
    this.key = redis.key(`cooldown:${id}`);
    this.channel = redis.key(`cooldown-announce:${id}`);
    cooldown.onExtend = (ms) => this.announce(ms);
    this.ready = this.listen().catch((error: unknown) =>
      logger.warn(
        { err: (error as Error).message },
        "cannot follow other replicas' rate-limit cooldowns; this one keeps its own",
      ),
    );
  }

  async close(): Promise<void> {
    this.cooldown.onExtend = null;
    await this.ready;
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber?.isOpen) await subscriber.close();
  }

  private async listen(): Promise<void> {
    // A subscribed connection can do nothing else: it gets one of its own.
    const subscriber = this.redis.client.duplicate();
    subscriber.on("error", () => {}); // the main connection already reports Redis problems
    await subscriber.connect();
    this.subscriber = subscriber;
    await subscriber.subscribe(this.channel, (message) => {
      const ms = Number(message);
      if (Number.isFinite(ms) && ms > 0) this.cooldown.adopt(ms);
    });
    const left = await this.redis.run((c) => c.pTTL(this.key));
    if (left > 0) this.cooldown.adopt(left);
  }

  private announce(ms: number): void {
    this.redis
      .run((c) =>
        c.eval(ANNOUNCE, { keys: [this.key], arguments: [String(Math.ceil(ms)), this.channel] }),
      )
      .catch((error: unknown) =>
        this.logger.warn(
          { err: (error as Error).message },
          "could not tell other replicas of a rate-limit cooldown",
        ),
      );
  }
}
