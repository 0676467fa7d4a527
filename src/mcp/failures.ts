import {
  type CallToolResult,
  type CompleteResult,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
} from "@modelcontextprotocol/server";
import { ArgumentsRefused, UserFacingError, userMessage } from "../errors.js";
import { ApiError, type ApiErrorCode } from "../http/errors.js";
import type { Logger } from "../log.js";
import { neutralise } from "../neutralise.js";
import { StoreUnavailable } from "../state/unavailable.js";

/**
 * The one place a failure becomes what an MCP client gets, for every method alike (sentry-mcp's
 * one error boundary): a tool answers a result with `isError` and one sentence; a resource or a
 * prompt a protocol error whose code says whose the problem is; a completion no suggestions (it
 * is a convenience, never an error in the person's face). Each handler calls it; the sentence is
 * always userMessage's.
 */

/** Whose problem it is, from the error kinds the client core has. */
export type FailureKind =
  /** The arguments: the caller can fix them (our checks, the API's 400 and 422). */
  | "invalid"
  /** What they name does not exist (the API's 404). */
  | "not_found"
  /** Not allowed, not offered, not configured, rate limited, in conflict, refused by the gate. */
  | "refused"
  /** The API or the shared state could not answer (5xx, network, timeout, Redis). */
  | "unavailable"
  /** The caller cancelled. */
  | "cancelled"
  /** A fault of this server: logged with its stack, told in one generic sentence. */
  | "internal";

const KIND_OF_CODE: Record<ApiErrorCode, FailureKind> = {
  invalid_input: "invalid",
  invalid_request: "invalid",
  bad_request: "invalid",
  payload_too_large: "invalid",
  not_found: "not_found",
  not_configured: "refused",
  not_offered: "refused",
  authentication_failed: "refused",
  forbidden: "refused",
  conflict: "refused",
  rate_limited: "refused",
  server_error: "unavailable",
  unexpected_response: "unavailable",
  answer_too_large: "unavailable",
  network_error: "unavailable",
  timeout: "unavailable",
  aborted: "cancelled",
};

/** A failure's kind: what the caller can do about it. */
export function failureKind(error: unknown): FailureKind {
  if (error instanceof ApiError) return KIND_OF_CODE[error.code];
  if (error instanceof StoreUnavailable) return "unavailable";
  if (error instanceof ArgumentsRefused) return "invalid";
  // UserFacingError and its kinds (the gate's refusals): the message is already the sentence.
  if (error instanceof UserFacingError) return "refused";
  return "internal";
}

export type ObservedMethod =
  | "tools/call"
  | "resources/read"
  | "prompts/get"
  | "completion/complete";

/** What a failed request answers, by method (the protocol errors are thrown by `failed`). */
export type FailureAnswer<M extends ObservedMethod> = M extends "tools/call"
  ? CallToolResult
  : M extends "completion/complete"
    ? CompleteResult
    : never;

/**
 * A failed request, answered as its method answers failures: logged once (at info for what the
 * caller can act on, at warn otherwise), then a tool result with `isError`, an empty completion,
 * or a thrown protocol error (-32602 invalid params, -32002 resource not found, -32603 otherwise)
 * whose message is the same one sentence.
 */
export function failed<M extends ObservedMethod>(
  method: M,
  error: unknown,
  subject: string,
  logger: Logger,
): FailureAnswer<M> {
  if (error instanceof ProtocolError) throw error; // already one: our own refusal of the request
  const kind = failureKind(error);
  logFailure(logger, error, kind, { method, subject });
  const sentence = neutralise(userMessage(error, subject));
  switch (method) {
    case "tools/call":
      return { content: [{ type: "text", text: sentence }], isError: true } as FailureAnswer<M>;
    case "completion/complete":
      return { completion: { values: [], hasMore: false } } as unknown as FailureAnswer<M>;
    default:
      throw protocolError(method, kind, sentence, subject);
  }
}

function protocolError(
  method: ObservedMethod,
  kind: FailureKind,
  sentence: string,
  subject: string,
): ProtocolError {
  if (kind === "not_found" && method === "resources/read")
    return new ResourceNotFoundError(subject, sentence);
  const code =
    kind === "invalid" || kind === "not_found"
      ? ProtocolErrorCode.InvalidParams
      : ProtocolErrorCode.InternalError;
  return new ProtocolError(code, sentence);
}

/** A failed call, logged at info when the caller can act on it, at warn otherwise. */
export function logFailure(
  logger: Logger,
  error: unknown,
  kind: FailureKind,
  context: Record<string, unknown>,
): void {
  if (kind === "unavailable" || kind === "internal")
    logger.warn({ ...context, err: error }, "call failed");
  else logger.info({ ...context, err: error }, "call refused");
}
