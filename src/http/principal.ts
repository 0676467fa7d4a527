import type { UpstreamCall } from "../events.js";
import { fromScope, inScope } from "../scope.js";

/**
 * Whom an upstream request is made for, carried by the async context rather than through every
 * call: the server sets it where an MCP request is dispatched (src/server.ts), the write gate
 * where it delivers a write in the background, and the attempt loop reads it to count each
 * attempt against that principal's share of the key's rate.
 */
export interface UpstreamCaller {
  /** `http:<client>`, `http:oauth:<hash>` or `stdio:<client name>`: the write gate's Caller.client. */
  principal: string;
  /** When the work began: its waits for a turn end, at the latest, the longest wait after it. */
  startedAt: number;
  /** The upstream attempts the work caused, for its audit record (the first CALLS_KEPT). */
  calls: UpstreamCall[];
}

/** Attempts kept per piece of work: an all_pages walk of hundreds is summed up by its first. */
const CALLS_KEPT = 50;

/** Work no client asked for: the shared name directory, startup checks, doctor. */
export const SERVER_PRINCIPAL = "server";
/**
 * Token exchanges, on a lane of their own: an attempt builds its request (and so may wait for
 * a renewal) while it holds its turn, so the renewal must never queue behind those turns.
 */
export const SIGN_IN_PRINCIPAL = "server:sign-in";

const CALLER = Symbol("upstream caller");

/** Runs `work` with its upstream requests counted against `principal`. */
export function asPrincipal<T>(
  principal: string,
  work: () => T,
  clock: () => number = Date.now,
): T {
  const caller: UpstreamCaller = { principal, startedAt: clock(), calls: [] };
  return inScope(CALLER, caller, work);
}

/** Notes an upstream attempt against the work it was made for, if any. */
export function noteCall(call: UpstreamCall): void {
  const calls = fromScope<UpstreamCaller>(CALLER)?.calls;
  if (calls && calls.length < CALLS_KEPT) calls.push(call);
}

/** The principal the current work runs for; null outside any (counted as the server's). */
export function currentCaller(): UpstreamCaller | null {
  return fromScope<UpstreamCaller>(CALLER) ?? null;
}
