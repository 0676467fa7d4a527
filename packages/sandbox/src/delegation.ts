import type { IncomingHttpHeaders } from "node:http";
import type { SandboxKey } from "./keys.js";
import type { User } from "./models/users.js";
import { Problem } from "./problem.js";

/**
 * Who a `/users/me*` request acts for (spec part 5, delegation): exactly one header, a user of
 * the entity, approved, on the key's allowlist, with the route's capability granted to the key,
 * and not read-only when writing.
 */
export function resolveDelegatedUser(
  headers: IncomingHttpHeaders,
  headerPrefix: string,
  key: SandboxKey,
  route: { id: string; capability: string; kind: "read" | "write" },
  users: readonly User[],
): User {
  const emailHeader = `${headerPrefix}-Email`;
  const idHeader = `${headerPrefix}-Id`;
  const email = single(headers[emailHeader.toLowerCase()]);
  const id = single(headers[idHeader.toLowerCase()]);
  const refuse = (status: number, detail: string, reasonCode: string) =>
    new Problem(status, detail, { reasonCode, routeId: route.id });

  if (email !== undefined && id !== undefined) {
    throw refuse(
      400,
      `Send exactly one of ${emailHeader} and ${idHeader}, not both.`,
      "delegation_headers_conflict",
    );
  }
  if (email === undefined && id === undefined) {
    throw refuse(
      400,
      `This route acts for a user: send ${emailHeader} or ${idHeader}.`,
      "delegation_header_missing",
    );
  }
  if (!key.capabilities.includes(route.capability)) {
    throw refuse(
      403,
      `This key lacks the delegated capability ${route.capability}.`,
      "capability_missing",
    );
  }
  const user =
    email !== undefined
      ? users.find((u) => u.email.toLowerCase() === email.trim().toLowerCase())
      : users.find((u) => u.id === id?.trim());
  if (!user) {
    throw refuse(404, `No user ${email ?? id} in this entity.`, "delegated_user_not_found");
  }
  if (user.status !== "approved") {
    throw refuse(
      403,
      `User ${user.id} is ${user.status}, not approved.`,
      "delegated_user_not_approved",
    );
  }
  if (!key.delegatedUsers.includes(user.id)) {
    throw refuse(403, `This key may not act for user ${user.id}.`, "delegated_user_not_allowed");
  }
  if (route.kind === "write" && user.read_only) {
    throw refuse(403, `User ${user.id} is read-only and cannot write.`, "delegated_user_read_only");
  }
  return user;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(",") : value;
}

/** The user a `/users/me*` handler acts for: the pipeline resolved it before the handler ran. */
export function delegatedUser(user: User | null): User {
  if (!user) throw new Error("a delegated route ran without its user");
  return user;
}
