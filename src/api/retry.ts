/**
 * When to try a call again, and how long to wait: pure functions, so the policy can be read
 * and tested on its own (stripe-node's `_shouldRetry`, octokit's throttling).
 */

export interface RetryPolicy {
  maxRetries: number;
  /** No retry starts once the call has taken this long. */
  maxTotalMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 3,
  maxTotalMs: 60_000,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
};

export type AttemptOutcome =
  | { kind: "status"; status: number; inProgress?: boolean }
  | { kind: "network"; code: string };

/** Statuses worth another try: the gateway's and the rate limiter's (issue "API client core"). */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/**
 * The same conditions for reads and writes: a write is retried only because its
 * Idempotency-Key makes a repeat harmless.
 */
export function isRetryable(outcome: AttemptOutcome): boolean {
  if (outcome.kind === "network") return outcome.code !== "aborted";
  // A 409 for the same key still in progress asks to come back later with that key.
  return RETRYABLE_STATUSES.has(outcome.status) || outcome.inProgress === true;
}

export function shouldRetry(args: {
  outcome: AttemptOutcome;
  retriesSoFar: number;
  elapsedMs: number;
  nextDelayMs: number;
  policy: RetryPolicy;
}): boolean {
  return (
    isRetryable(args.outcome) &&
    args.retriesSoFar < args.policy.maxRetries &&
    args.elapsedMs + args.nextDelayMs <= args.policy.maxTotalMs
  );
}

/**
 * Full-jitter exponential backoff; when the server named a wait (Retry-After), that wait plus
 * up to 10 % so that many waiting callers do not return in the same instant.
 */
export function retryDelayMs(
  retriesSoFar: number,
  retryAfterMs: number | null,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== null) return Math.ceil(retryAfterMs * (1 + random() * 0.1));
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retriesSoFar);
  return Math.floor(random() * ceiling);
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date (RFC 9110, 10.2.3). */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}
