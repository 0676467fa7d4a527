import type { WriteEvent } from "../events.js";
import { traceIdOf } from "../telemetry/tracing.js";
import { describeUser } from "./describe-user.js";
import type { Intent } from "./intent.js";

/** What the observers are told of a write's step: who, which write, what came of it. */
export function writeEvent(
  step: WriteEvent["step"],
  intent: Intent,
  outcome: string,
  reason: string | null = null,
): WriteEvent {
  return {
    step,
    intent: intent.id,
    operation: intent.operation,
    subject: Object.fromEntries(Object.entries(intent.path).map(([k, v]) => [k, String(v)])),
    idempotencyKey: intent.idempotencyKey,
    channel: intent.channel,
    outcome,
    reason,
    principal: intent.caller.client,
    email: intent.caller.email ?? null,
    delegatedUser: describeUser(intent.delegatedUser),
    session: intent.caller.sessionId,
    era: null,
    traceId: traceIdOf(intent.trace),
  };
}
