import type { ApiClient } from "./api/client.js";
import { userMessage } from "./errors.js";
import type { FleetCheck } from "./state/fleet-check.js";
import type { SharedRedis } from "./state/redis.js";

export interface Verdict {
  ready: boolean;
  /** What failed and what to check, when not ready. */
  reason?: string;
}

const READY_FOR_MS = 5_000;
const FIRST_BACKOFF_MS = 2_000;
const MAX_BACKOFF_MS = 60_000;

/**
 * GET /readyz: can this server reach the Redis its replicas share (when configured), and sign
 * in to the API? The verdict is kept a few seconds, and a
 * failing sign-in is retried with a growing pause: probes and scrapers poll without a token,
 * and each of their requests must not become a signed exchange against a refusing API.
 */
export class Readiness {
  private verdict: Verdict | null = null;
  private until = 0;
  private backoff = FIRST_BACKOFF_MS;
  private inflight: Promise<Verdict> | null = null;

  constructor(
    private readonly api: Pick<ApiClient, "tokens">,
    private readonly clock: () => number = Date.now,
    /** The shared state: without it writes cannot be recorded, so the replica is not ready. */
    private readonly redis: Pick<SharedRedis, "run"> | null = null,
    /** Whether this replica holds the fleet's state secret (asked with Redis, every probe). */
    private readonly fleet: Pick<FleetCheck, "problem"> | null = null,
  ) {}

  async check(): Promise<Verdict> {
    // Redis is asked every time (a PING costs the API nothing): its verdict is never stale.
    const store = await this.storeProblem();
    if (store) return { ready: false, reason: store };
    if (this.verdict && this.clock() < this.until) return this.verdict;
    this.inflight ??= this.probe().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async probe(): Promise<Verdict> {
    try {
      await this.api.tokens.get();
      this.verdict = { ready: true };
      this.until = this.clock() + READY_FOR_MS;
      this.backoff = FIRST_BACKOFF_MS;
    } catch (error) {
      this.verdict = { ready: false, reason: userMessage(error) };
      this.until = this.clock() + this.backoff;
      this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
    }
    return this.verdict;
  }

  private async storeProblem(): Promise<string | null> {
    if (!this.redis) return null;
    try {
      await this.redis.run((c) => c.ping());
      const otherSecret = await this.fleet?.problem();
      return otherSecret ? `${otherSecret[0]?.toUpperCase()}${otherSecret.slice(1)}.` : null;
    } catch (error) {
      return `${(error as Error).message}: writes cannot be recorded; check that Redis runs and that PORTFOLIO_REDIS_URL points at it.`;
    }
  }
}
