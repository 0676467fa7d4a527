import type { FieldError } from "@portfolio-mcp/field-errors";
import { parseRetryAfter } from "./retry.js";
import type { HttpReply } from "./transport.js";

export type ApiErrorCode =
  /** Refused before sending: the input breaks a documented limit. */
  | "invalid_input"
  /** Refused before sending: the server lacks a setting the call needs. */
  | "not_configured"
  /** Refused before sending: the key's contract does not list the operation. */
  | "not_offered"
  | "bad_request"
  | "authentication_failed"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "invalid_request"
  | "rate_limited"
  | "server_error"
  | "unexpected_response"
  /**
   * The API answered (the request was sent, its status is known), but the body was larger than
   * PORTFOLIO_MAX_RESPONSE_BYTES and was not read: for a write, not a sign that nothing happened.
   */
  | "answer_too_large"
  | "network_error"
  | "timeout"
  | "aborted";

export interface ApiErrorFields {
  code: ApiErrorCode;
  operationId: string;
  requestId?: string;
  status?: number;
  title?: string;
  detail?: string;
  type?: string;
  reasonCode?: string;
  scope?: string;
  routeId?: string;
  retryAfterSeconds?: number;
  fieldErrors?: FieldError[];
  /** The API's base URL, so a failure can say where it tried. */
  upstream?: string;
}

/**
 * Every failure of a call, as a value with a stable `code`. It keeps the problem document's
 * fields (spec part 7) and nothing of the request: no headers, no body, no bearer.
 */
export class ApiError extends Error implements ApiErrorFields {
  override name = "ApiError";
  readonly code: ApiErrorCode;
  readonly operationId: string;
  readonly requestId?: string;
  readonly status?: number;
  readonly title?: string;
  readonly detail?: string;
  readonly type?: string;
  readonly reasonCode?: string;
  readonly scope?: string;
  readonly routeId?: string;
  readonly retryAfterSeconds?: number;
  readonly fieldErrors?: FieldError[];
  readonly upstream?: string;

  constructor(message: string, fields: ApiErrorFields) {
    super(message);
    this.code = fields.code;
    this.operationId = fields.operationId;
    this.requestId = fields.requestId;
    this.status = fields.status;
    this.title = fields.title;
    this.detail = fields.detail;
    this.type = fields.type;
    this.reasonCode = fields.reasonCode;
    this.scope = fields.scope;
    this.routeId = fields.routeId;
    this.retryAfterSeconds = fields.retryAfterSeconds;
    this.fieldErrors = fields.fieldErrors;
    this.upstream = fields.upstream;
  }
}

const CODE_BY_STATUS: Record<number, ApiErrorCode> = {
  400: "bad_request",
  401: "authentication_failed",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  422: "invalid_request",
  429: "rate_limited",
};

export function codeForStatus(status: number): ApiErrorCode {
  return CODE_BY_STATUS[status] ?? (status >= 500 ? "server_error" : "bad_request");
}

export interface ErrorResponse {
  operationId: string;
  requestId: string;
  status: number;
  contentType: string;
  body: Buffer;
  retryAfterSeconds?: number;
  upstream?: string;
}

/**
 * An error answer as the one factory reads it: what the reply says (status, type, body, the
 * server's Retry-After), for the operation and request that drew it.
 */
export function errorFromReply(
  reply: { status: number; headers: Record<string, string>; body: Buffer },
  call: { operationId: string; requestId: string; upstream: string },
  scrub: ((text: string) => string) | undefined,
  now: number,
): ApiError {
  const retryAfterMs = parseRetryAfter(reply.headers["retry-after"], now);
  return errorFromResponse(
    {
      ...call,
      status: reply.status,
      contentType: reply.headers["content-type"] ?? "",
      body: reply.body,
      retryAfterSeconds: retryAfterMs === null ? undefined : Math.ceil(retryAfterMs / 1000),
    },
    scrub,
  );
}

/**
 * The one factory from an HTTP error answer to an ApiError, problem+json or not. Every text
 * taken from the answer is scrubbed first: a gateway may echo the request's Authorization.
 */
export function errorFromResponse(
  response: ErrorResponse,
  scrub: (text: string) => string = (text) => text,
): ApiError {
  const problem = parseProblem(response.body, response.contentType, scrub);
  const code = codeForStatus(response.status);
  const base = {
    code,
    operationId: response.operationId,
    status: response.status,
    requestId: problem?.request_id ?? response.requestId,
    retryAfterSeconds: response.retryAfterSeconds,
    upstream: response.upstream,
  };
  if (!problem) {
    const excerpt = scrub(response.body.toString("utf8")).replace(/\s+/g, " ").trim().slice(0, 120);
    const detail = `HTTP ${response.status} without a problem document${excerpt ? ` (${response.contentType || "no content type"}: "${excerpt}")` : ""}`;
    return new ApiError(`The Partner API answered ${response.operationId} with ${detail}.`, {
      ...base,
      detail,
    });
  }
  const reason = problem.reason_code ? ` ${problem.reason_code}` : "";
  return new ApiError(
    `The Partner API refused ${response.operationId} (${response.status}${reason}): ${problem.detail ?? problem.title ?? "no detail"}`,
    {
      ...base,
      title: problem.title,
      detail: problem.detail,
      type: problem.type,
      reasonCode: problem.reason_code,
      scope: problem.scope,
      routeId: problem.route_id,
      fieldErrors: Array.isArray(problem.errors)
        ? problem.errors
            .filter(isFieldError)
            .map((e) => ({ field: scrub(e.field), rule: scrub(e.rule), message: scrub(e.message) }))
        : undefined,
    },
  );
}

interface Problem {
  type?: string;
  title?: string;
  detail?: string;
  request_id?: string;
  reason_code?: string;
  scope?: string;
  route_id?: string;
  errors?: unknown[];
}

function parseProblem(
  body: Buffer,
  contentType: string,
  scrub: (text: string) => string,
): Problem | null {
  if (!/json/i.test(contentType) || body.length === 0) return null;
  try {
    const parsed: unknown = JSON.parse(body.toString("utf8"));
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return null;
    const p = parsed as Record<string, unknown>;
    const text = (key: string) =>
      typeof p[key] === "string" ? scrub(p[key] as string) : undefined;
    return {
      type: text("type"),
      title: text("title"),
      detail: text("detail"),
      request_id: text("request_id"),
      reason_code: text("reason_code"),
      scope: text("scope"),
      route_id: text("route_id"),
      errors: Array.isArray(p.errors) ? p.errors : undefined,
    };
  } catch {
    return null;
  }
}

function isFieldError(value: unknown): value is FieldError {
  const v = value as FieldError;
  return (
    !!v &&
    typeof v.field === "string" &&
    typeof v.rule === "string" &&
    typeof v.message === "string"
  );
}

/**
 * The API's 409 for a request whose Idempotency-Key is still being processed (our retry racing
 * a slow first attempt). The spec does not name this answer; a reason code saying "in
 * progress" or "in use", or a Retry-After on the 409, marks it. It says nothing of the outcome.
 */
export function isInProgressConflict(
  status: number | undefined,
  reasonCode: string | undefined,
  retryAfter: unknown,
): boolean {
  return (
    status === 409 &&
    (/in[_-]?progress|in[_-]?use|concurrent/i.test(reasonCode ?? "") || retryAfter !== undefined)
  );
}

/** The reason code of an answer's problem document, without building the whole error. */
export function reasonCodeOf(body: Buffer, contentType: string): string | undefined {
  return parseProblem(body, contentType, (text) => text)?.reason_code;
}

/** The caller cancelled: every wait and the request in flight end with this. */
export function cancelled(what: { operationId: string; requestId: string }): ApiError {
  return new ApiError("The call was cancelled.", {
    code: "aborted",
    operationId: what.operationId,
    requestId: what.requestId,
  });
}

/** Refused locally: names every field and rule, and says nothing was sent. */
export function invalidInput(operationId: string, fieldErrors: FieldError[]): ApiError {
  const list = fieldErrors.map((e) => `${e.field}: ${e.message}`).join("; ");
  return new ApiError(`Invalid input for ${operationId} (nothing was sent): ${list}.`, {
    code: "invalid_input",
    operationId,
    fieldErrors,
  });
}

/**
 * An answer the transport did not read because it was too large, as an error carrying its
 * status (the API did answer); null for an answer that was read.
 */
export function answerTooLarge(
  reply: HttpReply,
  call: { operationId: string; requestId: string; upstream?: string },
): ApiError | null {
  if (!reply.tooLarge) return null;
  const detail = `its answer is larger than ${reply.tooLarge.limitBytes} bytes (PORTFOLIO_MAX_RESPONSE_BYTES)`;
  return new ApiError(
    `The Partner API answered ${call.operationId} with HTTP ${reply.status}, but ${detail}, so it was not read.`,
    {
      code: "answer_too_large",
      operationId: call.operationId,
      requestId: reply.headers["x-request-id"] ?? call.requestId,
      status: reply.status,
      detail,
      upstream: call.upstream,
    },
  );
}
