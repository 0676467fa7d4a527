import type { Operation } from "../api/catalogue.js";
import type { ApiClient } from "../api/client.js";
import { ApiError } from "../http/errors.js";
import type { Intent } from "./intent.js";

/**
 * Where a confirmed write goes: the route recorded when it was drafted. The operation's
 * current entry only lends what does not change the request (how to read the answer).
 */
export function routeOf(api: ApiClient, intent: Intent): Operation {
  const current = api.has(intent.operation) ? api.operation(intent.operation) : null;
  const recorded = intent.route;
  if (current && !recorded) return current; // drafted before routes were recorded
  if (!recorded)
    throw new ApiError(`${intent.operation} is no longer offered and its route was not recorded.`, {
      code: "not_offered",
      operationId: intent.operation,
    });
  return {
    id: intent.operation,
    scope: current?.scope ?? "",
    kind: "write",
    family: current?.family ?? "",
    summary: current?.summary ?? intent.preview.action,
    params: null,
    query: null,
    body: null,
    response: current?.response ?? "json",
    contract: current?.contract ?? null,
    curated: current?.curated ?? false,
    ...recorded,
  };
}
