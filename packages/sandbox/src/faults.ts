import { Random } from "./random.js";

export type RouteKind = "read" | "write" | "exchange";

export interface FaultMatch {
  routeId?: string | string[];
  kind?: RouteKind | RouteKind[];
  method?: string;
}

export type FaultAction =
  /**
   * Answer with this status before the route runs: nothing is applied. The body is a problem
   * document unless `body` gives raw text (an HTML error page from a proxy, say).
   */
  | {
      type: "status";
      status: number;
      retryAfterSeconds?: number;
      body?: string;
      contentType?: string;
      /** Like a misconfigured gateway: the body quotes the request's headers, bearer included. */
      echoRequest?: boolean;
    }
  /** Hold the response this long, then go on. */
  | { type: "delay"; ms: number }
  /**
   * Hold a write this long after its Idempotency-Key is recorded and before it applies: a slow
   * write, which a retry with the same key finds still in progress.
   */
  | { type: "hold"; ms: number }
  /** Close the connection before the route runs: nothing is applied, no answer. */
  | { type: "drop" }
  /** Run the route (a write is applied and recorded), then close the connection unanswered. */
  | { type: "drop_after_apply" }
  /**
   * Run the route (a write is applied), then answer with its status and its JSON grown to
   * `bytes` by a `padding` field, streamed in chunks, with Content-Length unless
   * `declareLength` is false (chunked): an answer too large to hold.
   */
  | { type: "large_answer"; bytes: number; declareLength?: boolean };

export interface FaultRule {
  match?: FaultMatch;
  action: FaultAction;
  /** How many requests this rule applies to; omitted: until cleared. */
  count?: number;
  /** Chance that a matching request is affected (0..1); omitted: always. */
  probability?: number;
}

export interface FaultDecision {
  delayMs: number;
  holdMs: number;
  terminal: Exclude<FaultAction, { type: "delay" | "hold" }> | null;
}

interface ActiveRule extends FaultRule {
  id: number;
  remaining: number;
}

/** Scripted faults for tests, reachable only through the programmatic `control`. */
export class FaultInjector {
  private rules: ActiveRule[] = [];
  private nextId = 1;
  private readonly random: Random;

  constructor(seed: string) {
    this.random = new Random(`${seed}:faults`);
  }

  add(rule: FaultRule): number {
    const id = this.nextId++;
    this.rules.push({ ...rule, id, remaining: rule.count ?? Number.POSITIVE_INFINITY });
    return id;
  }

  remove(id: number): void {
    this.rules = this.rules.filter((r) => r.id !== id);
  }

  clear(): void {
    this.rules = [];
  }

  /** How many more requests a rule will hit: 0 once it has hit them all (or was removed). */
  remaining(id: number): number {
    return this.rules.find((r) => r.id === id)?.remaining ?? 0;
  }

  /** Which faults hit this request: delays add up; the first terminal fault wins. */
  decide(request: {
    routeId: string | null;
    kind: RouteKind | null;
    method: string;
  }): FaultDecision {
    const decision: FaultDecision = { delayMs: 0, holdMs: 0, terminal: null };
    for (const rule of this.rules) {
      if (rule.remaining <= 0 || !matches(rule.match, request)) continue;
      const timing = rule.action.type === "delay" || rule.action.type === "hold";
      if (!timing && decision.terminal) continue;
      if (rule.probability !== undefined && this.random.next() >= rule.probability) continue;
      rule.remaining--;
      if (rule.action.type === "delay") decision.delayMs += rule.action.ms;
      else if (rule.action.type === "hold") decision.holdMs += rule.action.ms;
      else decision.terminal = rule.action;
    }
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return decision;
  }
}

function matches(
  match: FaultMatch | undefined,
  request: { routeId: string | null; kind: RouteKind | null; method: string },
): boolean {
  if (!match) return true;
  const oneOf = <T>(wanted: T | T[] | undefined, actual: T | null) =>
    wanted === undefined ||
    (actual !== null && (Array.isArray(wanted) ? wanted.includes(actual) : wanted === actual));
  return (
    oneOf(match.routeId, request.routeId) &&
    oneOf(match.kind, request.kind) &&
    (match.method === undefined || match.method.toUpperCase() === request.method)
  );
}
