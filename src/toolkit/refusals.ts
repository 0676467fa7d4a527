import type { Refusals, SessionContext } from "./definitions.js";

/**
 * Operations the API itself refused to a caller (an IP restriction, dataroom rights, a key
 * changed since its export): later searches say so, so that a model does not try them in a
 * loop. Kept per session (a 2026 client has none: per client and user), for an hour, and
 * bounded, since it is only a hint. One per server process (ServerDeps), shared by the servers
 * of every session and request.
 */
const TTL_MS = 3_600_000;
const MAX_CALLERS = 1_000;

export class RefusedOperations implements Refusals {
  private readonly callers = new Map<string, { until: number; refused: Map<string, string> }>();

  remember(session: SessionContext, operation: string, why: string): void {
    const key = keyOf(session);
    const entry = this.callers.get(key) ?? { until: 0, refused: new Map<string, string>() };
    entry.until = Date.now() + TTL_MS;
    entry.refused.set(operation, why);
    this.callers.delete(key); // re-inserted last: the map's order is the eviction order
    this.callers.set(key, entry);
    if (this.callers.size > MAX_CALLERS)
      this.callers.delete(this.callers.keys().next().value as string);
  }

  of(session: SessionContext): ReadonlyMap<string, string> {
    const entry = this.callers.get(keyOf(session));
    if (!entry || entry.until < Date.now()) return new Map();
    return entry.refused;
  }
}

const keyOf = (session: SessionContext) =>
  JSON.stringify([session.sessionId, session.client, session.delegatedUser]);

/** A refusal no schema could foresee: the key's rights or routes, not the arguments. */
export const onlyTheApiKnew = (error: { code: string; reasonCode?: string }) =>
  error.code === "forbidden" || error.reasonCode === "route_not_found";
