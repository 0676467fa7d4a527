import { userMessage } from "../errors.js";
import { ApiError, isInProgressConflict } from "../http/errors.js";
import type { Logger } from "../log.js";
import type { Intent } from "./intent.js";

/** Outcomes that leave a confirmed write unknown: it is sent again, with the same key. */
const UNCERTAIN_CODES = new Set([
  "network_error",
  "timeout",
  "server_error",
  "rate_limited",
  "unexpected_response",
  "aborted",
]);

/**
 * What a failed attempt makes of the write. Uncertain when the outcome is unknown (no answer,
 * a 5xx, a 429, a timeout): sent again with the same key. Failed when the API refused it for
 * good. Succeeded when the API applied it and only its answer was too large to read.
 */
export function afterFailedAttempt(
  intent: Intent,
  error: unknown,
  logger: Logger,
): Pick<Intent, "state" | "result" | "error"> {
  const e = error instanceof ApiError ? error : null;
  if (e?.code === "answer_too_large" && e.status !== undefined && e.status < 300)
    return {
      state: "succeeded",
      result: { answer_not_read: e.detail ?? e.message },
      error: null,
    };
  const state = uncertain(intent, e) ? "uncertain" : "failed";
  logger.warn(
    { intent: intent.id, op: intent.operation, state, code: e?.code ?? "internal_error" },
    "write not confirmed by the API",
  );
  return {
    state,
    result: intent.result,
    error: {
      code: e?.code ?? "internal_error",
      message: userMessage(error, "the write"),
      ...(e?.status ? { status: e.status } : {}),
      ...(e?.reasonCode ? { reasonCode: e.reasonCode } : {}),
    },
  };
}

/** Whether a failed attempt says nothing of the outcome: the next confirmation resends it. */
function uncertain(intent: Intent, e: ApiError | null): boolean {
  // A 401 here means the bearer was refused even after one renewal (it expired again on the
  // way): the API refused before doing anything, and the next confirmation may well pass.
  const bearerRefused = e?.status === 401 && e.operationId === intent.operation;
  // A 409 for the same key still in progress (a retry racing a slow first attempt) says
  // nothing of the outcome yet: the next confirmation resends with the same key.
  return (
    !e ||
    UNCERTAIN_CODES.has(e.code) ||
    (e.code === "answer_too_large" && (e.status === undefined || e.status >= 500)) ||
    e.status === 408 ||
    e.status === 429 ||
    bearerRefused ||
    isInProgressConflict(e.status, e.reasonCode, e.retryAfterSeconds)
  );
}
