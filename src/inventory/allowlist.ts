import type { Operation } from "../api/catalogue.js";
import { GENERIC_WRITE, offerFor } from "../api/offer.js";
import { INVENTORY, select } from "./index.js";

/** The tools that settle a drafted write when the client cannot show a confirmation form. */
const SETTLES = ["confirm_write", "cancel_write"];
/** Writes named in a warning before "and N more". */
const NAMED_WRITES = 4;

/**
 * What a client's allowlist (the clients file's `tools`) may name, checked at startup: tool
 * names, and the operation ids and families of the route table in force (the key's contract
 * when one is loaded, else the curated catalogue).
 */
export function allowlistTerms(
  routes: ReadonlyMap<string, Operation>,
  deployment: { readOnly: boolean; allowSensitive: ReadonlySet<string> },
) {
  const fromContract = [...routes.values()].some((op) => op.contract !== null);
  const names = new Set(INVENTORY.tools.map((t) => t.name));
  for (const op of routes.values()) names.add(op.id).add(op.family);
  return {
    names: names as ReadonlySet<string>,
    source: fromContract ? "the key's contract" : "the curated catalogue (no contract loaded)",
    /**
     * What a client could draft under this allowlist with no tool to confirm or cancel it,
     * from the selection the server itself would make for that client; null when nothing.
     */
    unsettled(allowlist: ReadonlySet<string>, readOnly: boolean) {
      const selection = select(
        offerFor(routes, {
          readOnly: readOnly || deployment.readOnly,
          delegatedUser: true, // every client of the file acts for its own user
          allowSensitive: deployment.allowSensitive,
          allowlist,
        }),
      );
      const offered = new Set(selection.tools.map((t) => t.name));
      const missing = SETTLES.filter((t) => !offered.has(t));
      const drafts = selection.tools
        .filter((t) => t.kind === "draft")
        .map((t) => (t.name === GENERIC_WRITE ? genericWrites(selection) : t.name));
      return drafts.length > 0 && missing.length > 0 ? { drafts, missing } : null;
    },
  };
}

/** "draft_api_write: deal_create, deal_update and 3 more": the writes it alone would draft. */
function genericWrites(selection: ReturnType<typeof select>): string {
  const writes = [...selection.offer.offered.values()]
    .filter((op) => op.kind === "write" && !selection.toolByOperation.has(op.id))
    .map((op) => op.id);
  if (writes.length === 0) return GENERIC_WRITE;
  const named = writes.slice(0, NAMED_WRITES).join(", ");
  const more = writes.length > NAMED_WRITES ? ` and ${writes.length - NAMED_WRITES} more` : "";
  return `${GENERIC_WRITE}: ${named}${more}`;
}
