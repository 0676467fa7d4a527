import {
  type Bucket,
  type Decision,
  decide,
  FRESH_BUCKET,
  factorAt,
  idle,
  KEY_DECREASE,
  KEY_FLOOR,
  learn,
  PRINCIPAL_DECREASE,
  PRINCIPAL_FLOOR,
  type ShareLimits,
  type Verdict,
} from "./share-math.js";

/**
 * Where the buckets live: this process (LocalShareStore) or the fleet's Redis
 * (RedisShareStore). A grant registers `member` as one of the principal's requests in flight
 * until it is released (or, on Redis, until its lease lapses with the replica that held it).
 */
export interface ShareStore {
  take(principal: string, member: string): Promise<Verdict>;
  release(principal: string, member: string): void;
  /** A request of this principal drew a 429: slow it, and the key, for a while. */
  throttled(principal: string, retryAfterMs: number): void;
  /** The fraction of the configured key rate in force, as last seen (1: all of it). */
  readonly keyFactor: number;
}

/** The buckets of one process. In-flight requests are counted by the lanes, before asking. */
export class LocalShareStore implements ShareStore {
  private key: Bucket = FRESH_BUCKET;
  private readonly principals = new Map<string, Bucket>();
  private takes = 0;

  constructor(
    private readonly limits: ShareLimits,
    private readonly clock: () => number = Date.now,
  ) {}

  get keyFactor(): number {
    return factorAt(this.key, this.clock());
  }

  async take(principal: string): Promise<Verdict> {
    return this.takeNow(principal);
  }

  takeNow(principal: string): Decision {
    const now = this.clock();
    const decision = decide(
      this.limits,
      this.key,
      this.principals.get(principal) ?? FRESH_BUCKET,
      0,
      now,
    );
    if (decision.go) {
      this.key = decision.key;
      this.principals.set(principal, decision.principal);
    }
    // Principals come and go (sessions, sign-ins): forget the ones that owe nothing.
    if (++this.takes % 1024 === 0)
      for (const [name, bucket] of this.principals)
        if (idle(bucket, now)) this.principals.delete(name);
    return decision;
  }

  release(): void {}

  throttled(principal: string, retryAfterMs: number): void {
    const now = this.clock();
    this.key = learn(this.key, retryAfterMs, KEY_DECREASE, KEY_FLOOR, now);
    const bucket = this.principals.get(principal) ?? FRESH_BUCKET;
    this.principals.set(
      principal,
      learn(bucket, retryAfterMs, PRINCIPAL_DECREASE, PRINCIPAL_FLOOR, now),
    );
  }
}
