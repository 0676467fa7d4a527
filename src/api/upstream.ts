import { setTimeout as delay } from "node:timers/promises";
import type { ApiSettings } from "../config.js";
import { AttemptLoop, type Sleep } from "../http/attempts.js";
import { Cooldown } from "../http/cooldown.js";
import { RedisShareStore } from "../http/redis-share.js";
import { DEFAULT_RETRY_POLICY } from "../http/retry.js";
import { LocalShareStore } from "../http/share-store.js";
import { CooldownBroadcast } from "../http/shared-cooldown.js";
import { createTransport, type Transport } from "../http/transport.js";
import { type ShareEvents, UpstreamShare } from "../http/upstream-share.js";
import type { Logger } from "../log.js";
import type { SharedRedis } from "../state/redis.js";

export interface UpstreamOptions {
  settings: ApiSettings;
  logger: Logger;
  transport?: Transport;
  clock?: () => number;
  sleep?: Sleep;
  random?: () => number;
  /** Told of every upstream attempt (status null: no answer) and its milliseconds, for metrics. */
  onAttempt?: (operation: string, status: number | null, ms: number) => void;
  /** Redis shared with other replicas: one bearer (and one renewal) for the fleet. */
  redis?: SharedRedis;
  /** Told of waits for a turn and of refusals, for metrics. */
  shareEvents?: ShareEvents;
}

/** What every request to the API runs on, the token exchange's as much as business calls'. */
export interface Upstream {
  transport: Transport;
  share: UpstreamShare;
  loop: AttemptLoop;
  /** The replicas' shared cooldown (Redis only), closed with the client. */
  cooldownBroadcast?: CooldownBroadcast;
}

const abortableSleep: Sleep = (ms, signal) => delay(ms, undefined, { signal });

/** One transport, one cooldown, this replica's share of the key's rate, and the attempt loop. */
export function connectUpstream(options: UpstreamOptions): Upstream {
  const { settings } = options;
  const clock = options.clock ?? Date.now;
  const transport =
    options.transport ??
    createTransport({
      timeoutMs: settings.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes,
    });
  const cooldown = new Cooldown(clock);
  const cooldownBroadcast = options.redis
    ? new CooldownBroadcast(options.redis, cooldown, settings, options.logger)
    : undefined;
  const share = upstreamShare(options, clock);
  const loop = new AttemptLoop({
    transport,
    cooldown,
    share,
    policy: { ...DEFAULT_RETRY_POLICY, maxRetries: settings.maxRetries },
    maxRetryWaitMs: settings.maxRetryWaitSeconds * 1000,
    logger: options.logger,
    clock,
    sleep: options.sleep ?? abortableSleep,
    random: options.random ?? Math.random,
    onAttempt: options.onAttempt,
  });
  return { transport, share, loop, cooldownBroadcast };
}

/** Each client's share of the key's rate: counted here, or across the fleet on Redis. */
function upstreamShare(options: UpstreamOptions, clock: () => number): UpstreamShare {
  const { settings } = options;
  const limits = {
    perMinute: settings.rateLimitPerMinute,
    share: settings.sharePerClient,
    maxInFlight: settings.maxInFlightPerClient,
  };
  const store = options.redis
    ? new RedisShareStore(
        options.redis,
        limits,
        settings,
        // An attempt ends within the transport's timeouts; its slot outlives it by a margin.
        2 * settings.timeoutMs + 10_000,
        options.logger,
        clock,
      )
    : new LocalShareStore(limits, clock);
  return new UpstreamShare(
    store,
    { ...limits, maxWaitMs: settings.maxRetryWaitSeconds * 1000 },
    clock,
    options.shareEvents,
  );
}
