import type { FieldError } from "@portfolio-mcp/field-errors";
import { ApiError } from "./http/errors.js";
import { TURN_REFUSALS } from "./http/share-refusal.js";
import { StoreUnavailable } from "./state/unavailable.js";

const DELEGATION_REASONS: Record<string, string> = {
  delegated_user_not_found: "the delegated user does not exist in this entity",
  delegated_user_not_approved:
    "the delegated user is not approved (invited but not yet activated, or suspended)",
  delegated_user_not_allowed:
    "this API key may not act for the delegated user (not on its allowlist)",
  delegated_user_read_only: "the delegated user is read-only and cannot write",
  capability_missing: "this API key lacks the delegated capability for this route",
  delegation_header_missing: "no delegated user was sent",
  delegation_headers_conflict: "two delegated users were sent",
};

/**
 * One clear sentence for the assistant: what was refused, why, and what to do; never a stack
 * (sentry-mcp's `toUserMessage`). `subject` is what the model called (a tool, a resource, a
 * prompt), never an internal operation id. Reason codes win over detail text (spec part 7).
 */
export function userMessage(error: unknown, subject = "this call"): string {
  if (error instanceof UserFacingError) return error.message;
  // Redis is only needed to record writes (reads fall back to this replica alone): no write
  // goes out unrecorded, so "nothing was sent" holds.
  if (error instanceof StoreUnavailable)
    return `${error.message}; nothing was sent. ${error.refusal ? "Check the Redis server (its log says why), then try again." : "Try again when it is back."}`;
  if (!(error instanceof ApiError)) return "The server failed unexpectedly; the error was logged.";
  const ref = error.requestId ? ` (request ${error.requestId})` : "";
  const signingIn = error.operationId === "auth_token";
  const what = signingIn ? "signing in to the Partner API" : subject;
  const reason = error.reasonCode ? DELEGATION_REASONS[error.reasonCode] : undefined;
  switch (error.code) {
    case "invalid_input":
      return invalidArguments(subject, error.fieldErrors ?? []);
    case "not_configured":
    case "not_offered":
      return error.message;
    case "rate_limited":
      // Refused here, before sending (no request id to quote): this caller's share of the
      // key's rate, not the API.
      if (error.status === undefined && TURN_REFUSALS.has(error.reasonCode ?? ""))
        return `${signingIn ? "Signing in to the Partner API" : subject} was stopped: ${error.detail}; retry in ${error.retryAfterSeconds ?? 1} s${error.reasonCode === "key_rate" ? "" : ", or make fewer calls at once"}.`;
      return `The Partner API is rate limiting this server: wait ${error.retryAfterSeconds ?? "a few"} s before ${signingIn ? "signing in" : `calling ${subject}`} again${ref}.`;
    case "authentication_failed":
      return `The Partner API refused ${signingIn ? "to sign this server in" : `the bearer for ${subject}`} (${error.reasonCode ?? `HTTP ${error.status}`}): check PORTFOLIO_API_KEY_ID, PORTFOLIO_API_SECRET and this machine's clock${ref}.`;
    case "forbidden":
      if (reason) return `The Partner API refused ${what}: ${reason}${ref}.`;
      if (error.scope)
        return `The Partner API refused ${what}: this API key lacks the scope ${error.scope}, which an administrator can grant${ref}.`;
      if (error.reasonCode === "route_not_allowed")
        return `The Partner API refused ${what}: this API key may not call this route${ref}.`;
      if (error.reasonCode === "ip_not_allowed")
        return `The Partner API refused ${what}: this API key may not be used from this server's address${ref}.`;
      return `The Partner API refused ${what}: ${clause(error.detail ?? "access denied")}${ref}.`;
    case "bad_request":
    case "not_found":
      if (reason) return `The Partner API refused ${what}: ${reason}${ref}.`;
      if (signingIn || error.reasonCode === "route_not_found")
        return `The Partner API at ${error.upstream ?? "the configured address"} has no such route (HTTP ${error.status}) for ${what}: check that PORTFOLIO_API_BASE_URL is the API's address, ending with /v1${ref}.`;
      return `${error.code === "not_found" ? "Not found" : "Bad request"} for ${what}: ${clause(error.detail ?? error.message)}${ref}.`;
    case "invalid_request":
      return `The Partner API rejected ${what}: ${error.fieldErrors?.length ? fieldList(error.fieldErrors) : clause(error.detail ?? "invalid request")}${ref}.`;
    case "conflict":
      return `Conflict on ${what}: ${clause(error.detail ?? error.message)}${ref}.`;
    case "network_error":
    case "timeout":
      return `The Partner API at ${error.upstream ?? "the configured address"} could not be reached for ${what}: ${clause(error.detail ?? error.message)}${ref}.`;
    case "unexpected_response":
      return `The Partner API answered ${what} unexpectedly (${clause(error.message)}): check that PORTFOLIO_API_BASE_URL is the API's address, ending with /v1${ref}.`;
    case "answer_too_large":
      return `The Partner API answered ${what} (HTTP ${error.status}), but ${error.detail}, so it was not read: a smaller page or a narrower filter avoids it, or an operator can raise that setting${ref}.`;
    case "server_error":
      return `The Partner API failed on its side for ${what} (HTTP ${error.status}): try again in a minute${ref}.`;
    case "aborted":
      return "The call was cancelled.";
    default:
      return sentence(`${clause(error.message)}${ref}`);
  }
}

/** Local validation, as one sentence: the subject, each field with its rule, what to do. */
export function invalidArguments(
  subject: string,
  errors: readonly FieldError[],
  verb = "called",
): string {
  return `${subject} was not ${verb}: ${fieldList(errors)}; fix the arguments and try again (nothing was sent).`;
}

function fieldList(errors: readonly FieldError[]): string {
  const parts = errors.map((e) => `${e.field} ${e.message}`);
  if (parts.length <= 1) return parts[0] ?? "the arguments are invalid";
  return `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}

/** A text to embed mid-sentence: no final full stop of its own. */
function clause(text: string): string {
  return text.trim().replace(/[.\s]+$/, "");
}

/** Ends a text with a full stop, whatever it ended with. */
export function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** A failure whose message is already the sentence the assistant should read. */
export class UserFacingError extends Error {
  override name = "UserFacingError";
}

/**
 * Arguments refused by our own check before anything was fetched (a prompt's, a resource's):
 * the message is the sentence, naming the argument and the rule; the caller can fix them.
 */
export class ArgumentsRefused extends UserFacingError {
  override name = "ArgumentsRefused";
}
