/** The sandbox's notion of now, which tests can move to simulate a server clock ahead or behind. */
export class Clock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Moves the server clock `seconds` away from the machine's (positive: ahead). */
  skew(seconds: number): void {
    this.offsetMs = seconds * 1000;
  }
}

/** The business date (YYYY-MM-DD, UTC) of an instant. */
export function businessDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
