import type { ApiError } from "./errors.js";
import type { WaitReason } from "./share-math.js";
import type { TurnRequest, UpstreamPermit } from "./upstream-share.js";

/** One piece of work waiting for its turn. */
export interface Waiter {
  /** When the work began: older work goes first, so walks finish rather than all crawl. */
  order: number;
  deadline: number;
  since: number;
  /** Why it waits, once it has had to. */
  reason: WaitReason | null;
  what: TurnRequest;
  settle(outcome: UpstreamPermit | ApiError): void;
}

/** One principal's requests on this replica: a queue (older work first), and those in flight. */
export class Lane {
  readonly waiting: Waiter[] = [];
  inFlight = 0;
  pumping = false;
  /** Ends the pump's nap: a turn was given back, the head left. */
  private wake: (() => void) | null = null;

  /** `intervalMs`: the principal's interval between requests, as last decided (for estimates). */
  constructor(public intervalMs: number) {}

  /** Nobody waits, nothing is under way, no pump runs: the lane can be forgotten. */
  get idle(): boolean {
    return !this.pumping && this.waiting.length === 0 && this.inFlight === 0;
  }

  /** Where work that began at `order` queues: behind every older piece of work. */
  placeFor(order: number): number {
    const at = this.waiting.findIndex((w) => w.order > order);
    return at === -1 ? this.waiting.length : at;
  }

  /** Takes a waiter out of the queue; false when it was no longer there. */
  leave(waiter: Waiter): boolean {
    const at = this.waiting.indexOf(waiter);
    if (at === -1) return false;
    this.waiting.splice(at, 1);
    if (at === 0) this.wakeUp();
    return true;
  }

  /** Waits `ms`, or less when woken. */
  nap(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  wakeUp(): void {
    this.wake?.();
  }
}
