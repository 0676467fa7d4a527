import type { DelegatedUser } from "../config.js";

/**
 * Exactly one delegation header (spec part 5): the API refuses none or both on `/users/me*`.
 */
export function delegationHeaders(prefix: string, user: DelegatedUser): Record<string, string> {
  return "email" in user ? { [`${prefix}-Email`]: user.email } : { [`${prefix}-Id`]: user.id };
}
