import { UserFacingError } from "../errors.js";
import { ApiError } from "../http/errors.js";
import type { Logger } from "../log.js";

/** Refusals the caller can act on: the API's 4xx and our own checks. */
const EXPECTED_CODES = new Set(["invalid_input", "not_configured", "aborted"]);

function expected(error: unknown): boolean {
  if (error instanceof UserFacingError) return true;
  if (!(error instanceof ApiError)) return false;
  return EXPECTED_CODES.has(error.code) || (error.status !== undefined && error.status < 500);
}

/** A failed call, logged at info when it is an expected refusal, at warn otherwise. */
export function logFailure(logger: Logger, error: unknown, context: Record<string, unknown>): void {
  if (expected(error)) logger.info({ ...context, err: error }, "call refused");
  else logger.warn({ ...context, err: error }, "call failed");
}
