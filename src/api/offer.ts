import { memoised } from "../memo.js";
import type { Operation } from "./catalogue.js";

/**
 * What one caller is offered of the route table (the key's contract when one is loaded): the
 * rules of the deployment and of the caller, applied to every operation once, with the reason
 * each hidden one is hidden (for `doctor`, and for a model that asks for it by name).
 */
export interface ExposureRules {
  readOnly: boolean;
  /** Whether the server acts for a user: `/users/me*` operations need one. */
  delegatedUser: boolean;
  /** PORTFOLIO_ALLOW_SENSITIVE: families and operation ids offered although sensitive. */
  allowSensitive: ReadonlySet<string>;
  /** A client's allowlist (tool names, operation ids, families); null for everything. */
  allowlist: ReadonlySet<string> | null;
}

/** The generic tools; naming one in an allowlist allows what it reaches. */
export const GENERIC_READ = "call_api_read";
export const GENERIC_WRITE = "draft_api_write";

/** Why a write is sensitive, or null: these are offered only when the operator says so. */
export function sensitivity(op: Operation): string | null {
  if (op.kind !== "write") return null;
  if (op.capability === "rgpd_erasure" || /erasure/.test(op.id))
    return "an RGPD erasure, which cannot be undone";
  if (op.method === "DELETE") return "a deletion";
  if (op.family === "users" && !op.capability) return "user administration";
  if (op.family === "settings") return "a change of the entity's settings";
  if (/(^|_)(sync|import)(_|$)/.test(op.id)) return "a synchronisation or import";
  return null;
}

/** Which rule hides an operation: doctor groups by it and says what would change it. */
export type HidingRule = "read-only" | "delegated user" | "sensitive" | "allowlist";

/** Why the rules hide one operation. */
export interface Exclusion {
  rule: HidingRule;
  /** Shared by every operation hidden the same way ("a deletion"), without the operation. */
  reason: string;
  /** One sentence for this operation: what hides it and what would offer it. */
  sentence: string;
}

export class Offer {
  readonly offered: ReadonlyMap<string, Operation>;
  /** Operations the rules hide, each with one sentence saying why and what would change it. */
  readonly hidden: ReadonlyMap<string, string>;
  /** The same operations, with the rule and the reason they share with others hidden alike. */
  readonly exclusions: ReadonlyMap<string, Exclusion>;
  /** Whether the routes come from a contract: the long tail exists only then. */
  readonly fromContract: boolean;

  constructor(
    readonly routes: ReadonlyMap<string, Operation>,
    readonly rules: ExposureRules,
  ) {
    const offered = new Map<string, Operation>();
    const exclusions = new Map<string, Exclusion>();
    for (const op of routes.values()) {
      const why = this.exclusion(op) ?? (this.allowlisted(op) ? null : OUTSIDE_ALLOWLIST);
      if (why) exclusions.set(op.id, why);
      else offered.set(op.id, op);
    }
    this.offered = offered;
    this.exclusions = exclusions;
    this.hidden = new Map([...exclusions].map(([id, why]) => [id, why.sentence]));
    this.fromContract = [...routes.values()].some((op) => op.contract !== null);
  }

  /** Why the deployment's rules hide an operation from this caller, whatever the allowlist. */
  ruleOut(op: Operation): string | null {
    return this.exclusion(op)?.sentence ?? null;
  }

  private exclusion(op: Operation): Exclusion | null {
    if (op.kind === "write" && this.rules.readOnly)
      return {
        rule: "read-only",
        reason: "writes, and this server is read-only",
        sentence: "a write, and this server is read-only",
      };
    if (op.capability && !this.rules.delegatedUser)
      return {
        rule: "delegated user",
        reason: "act as a user, and none is configured",
        sentence:
          "it acts as a user, and none is configured (PORTFOLIO_DELEGATED_USER_EMAIL or _ID)",
      };
    const sensitive = sensitivity(op);
    if (
      sensitive &&
      !this.rules.allowSensitive.has(op.id) &&
      !this.rules.allowSensitive.has(op.family)
    )
      return {
        rule: "sensitive",
        reason: sensitive,
        sentence: `${sensitive}: offered only when PORTFOLIO_ALLOW_SENSITIVE lists ${op.id} or ${op.family}`,
      };
    return null;
  }

  /** Whether the client's allowlist names the operation, its family or the tool reaching it. */
  allowlisted(op: Operation): boolean {
    const list = this.rules.allowlist;
    return (
      list === null ||
      list.has(op.id) ||
      list.has(op.family) ||
      list.has(op.kind === "read" ? GENERIC_READ : GENERIC_WRITE)
    );
  }

  has(id: string): boolean {
    return this.offered.has(id);
  }
}

const OUTSIDE_ALLOWLIST: Exclusion = {
  rule: "allowlist",
  reason: "outside this client's allowlist",
  sentence: "outside this client's allowlist",
};

const offers = new WeakMap<ReadonlyMap<string, Operation>, Map<string, Offer>>();

/**
 * The offer for a route table and a set of rules, made once and shared: every session of the
 * same client (and every client with the same rules) sees the same selection and listing.
 */
export function offerFor(routes: ReadonlyMap<string, Operation>, rules: ExposureRules): Offer {
  const key = JSON.stringify([
    rules.readOnly,
    rules.delegatedUser,
    [...rules.allowSensitive].sort(),
    rules.allowlist ? [...rules.allowlist].sort() : null,
  ]);
  return memoised(offers, routes, key, () => new Offer(routes, rules));
}
