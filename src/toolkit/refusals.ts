import { rememberBilled } from "../writes/billed.js";
import type { Intent } from "../writes/intent.js";
import type { SessionContext, ToolContext } from "./definitions.js";

/**
 * Operations the API itself refused to a caller (an IP restriction, dataroom rights, a key
 * changed since its export): later searches say so, so that a model does not try them in a
 * loop. Kept per session (a 2026 client has none: per client and user), for an hour, and
 * bounded, since it is only a hint.
 */
const TTL_MS = 3_600_000;
const MAX_CALLERS = 1_000;

const memory = new Map<string, { until: number; refused: Map<string, string> }>();

const keyOf = (session: SessionContext) =>
  JSON.stringify([session.sessionId, session.client, session.delegatedUser]);

export function rememberRefusal(session: SessionContext, operation: string, why: string): void {
  const key = keyOf(session);
  const entry = memory.get(key) ?? { until: 0, refused: new Map<string, string>() };
  entry.until = Date.now() + TTL_MS;
  entry.refused.set(operation, why);
  memory.delete(key); // re-inserted last: the map's order is the eviction order
  memory.set(key, entry);
  if (memory.size > MAX_CALLERS) memory.delete(memory.keys().next().value as string);
}

/** A refusal no schema could foresee: the key's rights or routes, not the arguments. */
export const onlyTheApiKnew = (error: { code: string; reasonCode?: string }) =>
  error.code === "forbidden" || error.reasonCode === "route_not_found";

export function refusalsOf(session: SessionContext): ReadonlyMap<string, string> {
  const entry = memory.get(keyOf(session));
  if (!entry || entry.until < Date.now()) return new Map();
  return entry.refused;
}

/**
 * A confirmed write, once the gate settled it, handed back after what it teaches is remembered:
 * a refusal only the API could know (a route or IP restriction, rights, a key narrowed since its
 * export), like a refused read; a billable call sent, for the next draft of the same call to say
 * so (writes/billed.ts).
 */
export async function settled(ctx: ToolContext, intent: Intent): Promise<Intent> {
  const error = intent.error;
  if (intent.state === "failed" && error && onlyTheApiKnew(error))
    rememberRefusal(ctx.session, intent.operation, error.message);
  if (ctx.writes) await rememberBilled(ctx.writes.billed, intent, ctx.logger);
  return intent;
}
