import { closest } from "../closest.js";
import type { Operation } from "./catalogue.js";
import type { HidingRule, Offer } from "./offer.js";

/** What one family of the route table comes to under an offer. */
export interface FamilySummary {
  family: string;
  offered: number;
  /** The hidden operations, grouped by the reason they share, in route order. */
  hidden: HiddenGroup[];
}

export interface HiddenGroup {
  rule: HidingRule;
  reason: string;
  ids: string[];
}

/** The offer family by family, families in alphabetical order (for `doctor`). */
export function summariseByFamily(offer: Offer): FamilySummary[] {
  const families = new Map<string, FamilySummary>();
  for (const op of offer.routes.values()) {
    let family = families.get(op.family);
    if (!family) {
      family = { family: op.family, offered: 0, hidden: [] };
      families.set(op.family, family);
    }
    const why = offer.exclusions.get(op.id);
    if (!why) {
      family.offered++;
      continue;
    }
    const group = family.hidden.find((g) => g.rule === why.rule && g.reason === why.reason);
    if (group) group.ids.push(op.id);
    else family.hidden.push({ rule: why.rule, reason: why.reason, ids: [op.id] });
  }
  return [...families.values()].sort((a, b) => a.family.localeCompare(b.family));
}

/**
 * One sentence for each PORTFOLIO_ALLOW_SENSITIVE entry that names neither a family nor an
 * operation of the route table: most often a typo, which would leave hidden what the operator
 * meant to offer (said at startup and by `doctor`).
 */
export function unknownSensitiveEntries(
  routes: ReadonlyMap<string, Operation>,
  entries: Iterable<string>,
): string[] {
  const names = new Set([...routes.values()].flatMap((op) => [op.id, op.family]));
  const where = [...routes.values()].some((op) => op.contract) ? "of the contract" : "here";
  return [...entries]
    .filter((entry) => !names.has(entry))
    .map((entry) => {
      const near = closest(entry, names);
      return `PORTFOLIO_ALLOW_SENSITIVE lists ${entry}, which is neither a family nor an operation ${where}${near ? `; did you mean ${near}?` : "."}`;
    });
}
