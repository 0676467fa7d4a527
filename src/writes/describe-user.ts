import type { DelegatedUser } from "../config.js";

/** The delegated user as the records name it: an e-mail, or `user id …`. */
export function describeUser(user: DelegatedUser | null): string | null {
  if (!user) return null;
  return "email" in user ? user.email : `user id ${user.id}`;
}
