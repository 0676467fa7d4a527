/**
 * One rate-limit cooldown shared by every call of a client: after a 429 nobody sends until it
 * has passed, since the API bans clients that keep knocking (spec part 7, progressive ban).
 */
export class Cooldown {
  private until = 0;
  /** Told of each cooldown this process starts, so other replicas can keep it too. */
  onExtend: ((ms: number) => void) | null = null;

  constructor(private readonly now: () => number) {}

  extend(ms: number): void {
    this.adopt(ms);
    this.onExtend?.(ms);
  }

  /** A cooldown another replica saw: kept here, not announced again. */
  adopt(ms: number): void {
    this.until = Math.max(this.until, this.now() + ms);
  }

  remainingMs(): number {
    return Math.max(0, this.until - this.now());
  }
}
