import type { Operation } from "../api/catalogue.js";
import { offerFor } from "../api/offer.js";
import type { Grants, Intent } from "../writes/intent.js";
import { select } from "./index.js";

/**
 * What the write gate asks before every delivery (on whichever replica delivers): would this
 * server, with its own rules and route table, offer a tool that drafts this intent's operation
 * to a caller with these grants? The same selection the caller's tool list comes from: the
 * read-only rule, the sensitive list, the delegated user, the allowlist and the contract.
 */
export function deliverability(
  routes: ReadonlyMap<string, Operation>,
  deployment: { allowSensitive: ReadonlySet<string> },
): (intent: Intent, grants: Grants | null) => string | null {
  return (intent, grants) => {
    const op = routes.get(intent.operation);
    if (!op) return `the API key's contract no longer lists ${intent.operation}`;
    if (op.kind !== "write") return `${intent.operation} is not a write`;
    const offer = offerFor(routes, {
      readOnly: grants?.readOnly ?? false,
      delegatedUser: intent.delegatedUser !== null,
      allowSensitive: deployment.allowSensitive,
      allowlist: grants?.tools ? new Set(grants.tools) : null,
    });
    const hidden = offer.hidden.get(op.id);
    if (hidden) return hidden;
    const selection = select(offer);
    // The generic draft tool drafts any offered write; a curated one, its own.
    const drafts = selection.tools.some(
      (t) =>
        t.kind === "draft" &&
        (t.writes === "offered" || (t.writes as readonly string[]).includes(op.id)),
    );
    return drafts ? null : "no tool offered to this caller drafts it";
  };
}
