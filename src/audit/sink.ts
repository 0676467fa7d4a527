import {
  DATA_METHODS,
  type Observer,
  type RequestEvent,
  type SignInRefusal,
  type WriteEvent,
} from "../events.js";
import type { Logger } from "../log.js";
import type { AuditEntry, AuditTrail } from "./trail.js";

/**
 * The audit trail as an observer: one record per request that reads or changes data, per step
 * of a write, per refused sign-in. Decisions and deliveries are fsynced before the write goes
 * on, and a failure to record them is thrown (the gate then sends nothing); a read's record
 * that cannot be written is logged and counted, and the read goes on.
 */
export function auditSink(
  trail: AuditTrail,
  options: { logger: Logger; onReadLost?: () => void },
): Observer {
  const lost = (event: string, error: unknown) => {
    options.onReadLost?.();
    options.logger.warn(
      { event, err: (error as Error).message },
      "an audit record could not be written; the call went on",
    );
  };
  return {
    request(e: RequestEvent) {
      if (!DATA_METHODS.has(e.method)) return; // tools/list and the like touch no data
      try {
        trail.append(requestRecord(e), false);
      } catch (error) {
        lost("request", error);
      }
    },
    write(e: WriteEvent) {
      // Thrown when it cannot be written: the gate decides (a confirmation is then not acted on).
      trail.append(writeRecord(e), e.step !== "draft");
    },
    signInRefused(e: SignInRefusal) {
      try {
        trail.append(signInRefusalRecord(e), false);
      } catch (error) {
        lost("sign-in-refused", error);
      }
    },
  };
}

/** A request that read or changed data: who, what, the upstream calls it made, how it ended. */
function requestRecord(e: RequestEvent): AuditEntry {
  return {
    event: "request",
    ...actor(e),
    method: e.method,
    target: e.target ?? undefined,
    operations: e.calls.map((c) => ({
      id: c.operation,
      status: c.status,
      request_id: c.requestId,
    })),
    outcome: e.outcome,
    ...(e.errorType ? { reason: e.errorType } : {}),
    duration_ms: e.durationMs,
    ...(e.traceId ? { trace_id: e.traceId } : {}),
    arguments: e.arguments,
  };
}

/** One step of a write (draft, decision, delivery) with its intent and idempotency key. */
function writeRecord(e: WriteEvent): AuditEntry {
  return {
    event: e.step,
    ...actor(e),
    method: e.step,
    target: e.operation,
    subject: e.subject,
    intent: e.intent,
    channel: e.channel,
    idempotency_key: e.idempotencyKey,
    outcome: e.outcome,
    ...(e.reason ? { reason: e.reason } : {}),
    ...(e.traceId ? { trace_id: e.traceId } : {}),
  };
}

function signInRefusalRecord(e: SignInRefusal): AuditEntry {
  return {
    event: "sign-in-refused",
    ...(e.principal ? { principal: e.principal } : {}),
    outcome: `${e.status}`,
    reason: e.reason,
  };
}

function actor(e: RequestEvent | WriteEvent) {
  return {
    principal: e.principal,
    email: e.email,
    delegated_user: e.delegatedUser,
    session: e.session ?? "stateless",
    ...(e.era ? { era: e.era } : {}),
  };
}
