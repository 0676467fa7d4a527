import { ApiError } from "../api/errors.js";

const DELEGATION_REASONS: Record<string, string> = {
  delegated_user_not_found: "the delegated user does not exist in this entity",
  delegated_user_not_approved: "the delegated user is not approved (suspended or pending)",
  delegated_user_not_allowed:
    "this API key may not act for the delegated user (not on its allowlist)",
  delegated_user_read_only: "the delegated user is read-only and cannot write",
  capability_missing: "this API key lacks the delegated capability for this route",
  delegation_header_missing: "no delegated user was sent",
  delegation_headers_conflict: "two delegated users were sent",
};

/**
 * One clear sentence for the assistant: what was refused, why, and what to do; never a stack
 * (sentry-mcp's `toUserMessage`). Reason codes are preferred over detail text (spec part 7).
 */
export function userMessage(error: unknown): string {
  if (error instanceof UserFacingError) return error.message;
  if (!(error instanceof ApiError)) return "The server failed unexpectedly; the error was logged.";
  const ref = error.requestId ? ` (request ${error.requestId})` : "";
  const what =
    error.operationId === "auth_token" ? "signing in to the Partner API" : error.operationId;
  const reason = error.reasonCode ? DELEGATION_REASONS[error.reasonCode] : undefined;
  switch (error.code) {
    case "invalid_input":
      return `Invalid arguments: ${fieldList(error)}. Nothing was sent; fix these and call again.`;
    case "not_configured":
      return error.message;
    case "rate_limited":
      return `The Partner API is rate limiting this server: wait ${error.retryAfterSeconds ?? "a few"} s before calling ${what} again${ref}.`;
    case "authentication_failed":
      return `The server could not authenticate to the Partner API (${error.reasonCode ?? error.status}): check PORTFOLIO_API_KEY_ID, PORTFOLIO_API_SECRET and the clock${ref}.`;
    case "forbidden":
      if (reason) return `Refused ${what}: ${reason}${ref}.`;
      if (error.scope)
        return `Refused ${what}: this API key lacks the scope ${error.scope}; an administrator can grant it${ref}.`;
      if (error.reasonCode === "route_not_allowed")
        return `Refused ${what}: this API key is not allowed to call this route${ref}.`;
      if (error.reasonCode === "ip_not_allowed")
        return `Refused ${what}: this API key may not be used from this server's address${ref}.`;
      return `Refused ${what}: ${error.detail ?? "access denied"}${ref}.`;
    case "bad_request":
    case "not_found":
      if (reason) return `Refused ${what}: ${reason}${ref}.`;
      return `${error.code === "not_found" ? "Not found" : "Bad request"} (${what}): ${error.detail ?? error.message}${ref}.`;
    case "invalid_request":
      return `The Partner API rejected ${what}: ${error.fieldErrors?.length ? fieldList(error) : (error.detail ?? "invalid request")}${ref}.`;
    case "conflict":
      return `Conflict on ${what}: ${error.detail ?? error.message}${ref}.`;
    case "server_error":
    case "network_error":
    case "timeout":
    case "unexpected_response":
      return `The Partner API is unavailable or answered unexpectedly for ${what}${error.status ? ` (HTTP ${error.status})` : ""}: try again shortly${ref}.`;
    case "aborted":
      return "The call was cancelled.";
    default:
      return `${error.message}${ref}`;
  }
}

function fieldList(error: ApiError): string {
  return (
    (error.fieldErrors ?? []).map((e) => `${e.field} ${e.message} (rule: ${e.rule})`).join("; ") ||
    error.message
  );
}

/** A failure whose message is already the sentence the assistant should read. */
export class UserFacingError extends Error {
  override name = "UserFacingError";
}
