import { ApiError, cancelled } from "./errors.js";
import { currentCaller, SERVER_PRINCIPAL } from "./principal.js";
import { Lane, type Waiter } from "./share-lane.js";
import { intervals, type ShareLimits, type WaitReason } from "./share-math.js";
import { turnRefusal } from "./share-refusal.js";
import type { ShareStore } from "./share-store.js";

export interface ShareSettings extends ShareLimits {
  /** The longest a piece of work (an MCP request) waits for its turns, from when it began. */
  maxWaitMs: number;
}

/** For metrics: waits that ended in a turn, and refusals, by reason. */
export interface ShareEvents {
  waited?(reason: WaitReason, ms: number): void;
  refused?(reason: WaitReason): void;
}

/** One upstream attempt's turn: released once the answer (or the failure) is in. */
export interface UpstreamPermit {
  readonly principal: string;
  /** The attempt drew a 429 with this Retry-After (ms). */
  throttled(retryAfterMs: number): void;
  release(): void;
}

export interface TurnRequest {
  operationId: string;
  requestId: string;
  signal?: AbortSignal;
}

const MEMBER_PREFIX = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

/**
 * Fair use of the one API key (issue 22): every upstream attempt, token exchanges and retries
 * included, waits here for its principal's turn: within the principal's share of the key's
 * rate, within the key's rate, and with fewer than the principal's in-flight bound under way.
 * Each principal queues on its own lane (older work first), so a client that sends a hundred
 * walks waits behind its own requests and nobody else's. A wait that would end after the
 * work's deadline is refused at once with one sentence saying which limit and when to retry.
 */
export class UpstreamShare {
  private readonly lanes = new Map<string, Lane>();
  private members = 0;

  constructor(
    private readonly store: ShareStore,
    readonly settings: ShareSettings,
    private readonly clock: () => number = Date.now,
    private readonly events: ShareEvents = {},
  ) {}

  /** The key's rate in force, requests a minute: the setting, lowered after 429s. */
  get keyPerMinute(): number {
    return this.settings.perMinute * this.store.keyFactor;
  }

  /** Requests waiting for a turn on this replica, all principals together. */
  get waiting(): number {
    let count = 0;
    for (const lane of this.lanes.values()) count += lane.waiting.length;
    return count;
  }

  acquire(what: TurnRequest): Promise<UpstreamPermit> {
    if (what.signal?.aborted) return Promise.reject(cancelled(what));
    const caller = currentCaller();
    const principal = caller?.principal ?? SERVER_PRINCIPAL;
    const now = this.clock();
    const lane = this.lane(principal);
    const order = caller?.startedAt ?? now;
    const at = lane.placeFor(order);
    const full = lane.inFlight >= this.settings.maxInFlight;
    const waiter: Waiter = {
      order,
      deadline: order + this.settings.maxWaitMs,
      since: now,
      // Behind its own requests, it waits for its share (or for one of them to finish).
      reason: at === 0 ? null : full ? "in_flight" : "client_share",
      what,
      settle: () => {},
    };
    // Behind this many of its own requests it would wait about this long: refuse now rather
    // than hold the call until its deadline.
    const estimate = (at + (full ? 1 : 0)) * lane.intervalMs;
    if (waiter.reason && now + estimate > waiter.deadline) {
      this.forget(principal, lane);
      return Promise.reject(this.refusal(principal, what, waiter.reason, estimate));
    }
    return new Promise<UpstreamPermit>((resolve, reject) => {
      const onAbort = () => {
        if (lane.leave(waiter)) reject(cancelled(what));
      };
      const expiry = setTimeout(() => this.expire(principal, lane, waiter), waiter.deadline - now);
      expiry.unref();
      waiter.settle = (outcome) => {
        clearTimeout(expiry);
        what.signal?.removeEventListener("abort", onAbort);
        if (outcome instanceof ApiError) reject(outcome);
        else resolve(outcome);
      };
      what.signal?.addEventListener("abort", onAbort, { once: true });
      lane.waiting.splice(at, 0, waiter);
      this.pump(principal, lane).catch((error: unknown) => this.failAll(lane, error));
    });
  }

  private lane(principal: string): Lane {
    let lane = this.lanes.get(principal);
    if (!lane) {
      const { principal: intervalMs } = intervals(this.settings, 1, 1);
      lane = new Lane(intervalMs);
      this.lanes.set(principal, lane);
    }
    return lane;
  }

  /**
   * Gives turns to the lane's head, one at a time, for as long as anyone waits: one question
   * to the store per turn (and per wait), whatever the queue's length.
   */
  private async pump(principal: string, lane: Lane): Promise<void> {
    if (lane.pumping) return;
    lane.pumping = true;
    try {
      while (lane.waiting.length > 0) {
        const head = lane.waiting[0] as Waiter;
        if (lane.inFlight >= this.settings.maxInFlight) {
          if (this.clock() >= head.deadline) {
            this.refuse(principal, lane, head, "in_flight", lane.intervalMs);
            continue;
          }
          head.reason = "in_flight";
          await lane.nap(head.deadline - this.clock());
          continue;
        }
        const member = `${MEMBER_PREFIX}-${++this.members}`;
        const decision = await this.store.take(principal, member);
        const now = this.clock();
        const served = lane.waiting[0]; // the head may have left (cancelled) meanwhile
        if (decision.go) {
          if (served) this.grant(principal, lane, served, member, now);
          else this.store.release(principal, member);
          continue;
        }
        lane.intervalMs = decision.intervalMs;
        if (!served) break;
        const late = now + decision.waitMs > served.deadline;
        // A rate wait is known in advance; an in-flight one only once the deadline is reached.
        if (late && (decision.reason !== "in_flight" || now >= served.deadline)) {
          this.refuse(principal, lane, served, decision.reason, decision.waitMs);
          continue;
        }
        served.reason = decision.reason;
        await lane.nap(Math.min(decision.waitMs, Math.max(0, served.deadline - now)));
      }
    } finally {
      lane.pumping = false;
      this.forget(principal, lane);
    }
  }

  /** The store failed in a way it should not (it falls back on its own): nobody hangs on it. */
  private failAll(lane: Lane, error: unknown) {
    for (const waiter of lane.waiting.splice(0))
      waiter.settle(
        new ApiError(`${waiter.what.operationId} was not sent: ${(error as Error).message}.`, {
          code: "server_error",
          operationId: waiter.what.operationId,
          requestId: waiter.what.requestId,
        }),
      );
  }

  private grant(principal: string, lane: Lane, waiter: Waiter, member: string, now: number) {
    lane.waiting.shift();
    lane.inFlight++;
    if (waiter.reason) this.events.waited?.(waiter.reason, now - waiter.since);
    let released = false;
    const store = this.store;
    waiter.settle({
      principal,
      throttled: (retryAfterMs) => store.throttled(principal, retryAfterMs),
      release: () => {
        if (released) return;
        released = true;
        lane.inFlight--;
        store.release(principal, member);
        lane.wakeUp();
        this.forget(principal, lane);
      },
    });
  }

  private refuse(
    principal: string,
    lane: Lane,
    waiter: Waiter,
    reason: WaitReason,
    waitMs: number,
  ) {
    lane.leave(waiter);
    waiter.settle(this.refusal(principal, waiter.what, reason, waitMs));
  }

  /** A waiter behind the head reached its deadline: the head's is the pump's to judge. */
  private expire(principal: string, lane: Lane, waiter: Waiter) {
    const at = lane.waiting.indexOf(waiter);
    if (at <= 0) return;
    this.refuse(principal, lane, waiter, waiter.reason ?? "client_share", at * lane.intervalMs);
  }

  private forget(principal: string, lane: Lane) {
    if (lane.idle) this.lanes.delete(principal);
  }

  private refusal(
    principal: string,
    what: TurnRequest,
    reason: WaitReason,
    waitMs: number,
  ): ApiError {
    this.events.refused?.(reason);
    return turnRefusal(what, principal, reason, waitMs, this.settings, this.store.keyFactor);
  }
}
