import { CAPABILITIES, CONTRACT_TABLE, SCOPE_FAMILIES } from "./contract/table.js";
import { DEMO_USERS } from "./data/demo.js";

/** An API key as the sandbox's administrator configured it (spec part 5, authorisation). */
export interface SandboxKey {
  keyId: string;
  secret: string;
  label: string;
  /** `family:read`, `family:write`, `family:*` or `*`. */
  scopes: string[];
  /** Route ids this key may call; absent means every route. */
  routes?: string[];
  /** Client addresses or IPv4/IPv6 subnets (`10.0.0.0/8`); absent means any address. */
  ips?: string[];
  /** Delegated capabilities (`saved_views`, `custom_dashboards`, ...). */
  capabilities: string[];
  /** User ids this key may act for; empty means nobody (the allowlist must be filled). */
  delegatedUsers: string[];
  /** Bearer lifetime for this key, when it differs from the sandbox's. */
  tokenTtlSeconds?: number;
}

/** Read and write on every scope family of the contract (spec part 5). */
const ALL_SCOPES = SCOPE_FAMILIES.flatMap((f) => [`${f}:read`, `${f}:write`]);
const READ_SCOPES = SCOPE_FAMILIES.map((f) => `${f}:read`);

/** The capabilities every read under /users/me needs: all but erasure, which only writes. */
const READ_CAPABILITIES = CAPABILITIES.filter((c) => c !== "rgpd_erasure");

/**
 * What a portfolio manager works with in chat: every read, and the writes of the daily loop
 * (alerts and notifications, calendar, tasks, follow-up notes, documents). Notes share the
 * operations:write scope with operation creation and sync, so the key's route allowlist, not
 * its scopes, keeps it to the notes.
 */
const PORTFOLIO_MANAGER_WRITES = new Set(["alerts", "calendar", "tasks", "documents"]);
const OPERATION_NOTE_WRITES = new Set([
  "operation_note_create",
  "operation_note_update",
  "operation_note_resolve",
]);
const portfolioManagerRoutes = CONTRACT_TABLE.filter(
  (op) =>
    op.kind === "read" ||
    (op.kind === "write" && PORTFOLIO_MANAGER_WRITES.has(op.family)) ||
    OPERATION_NOTE_WRITES.has(op.id),
).map((op) => op.id);

/** The demo keys. Their secrets are public on purpose: this is a sandbox. */
export const DEMO_KEYS = {
  full: {
    keyId: "sandboxdemo",
    secret: "sandbox-demo-secret-not-for-production",
    label: "Demo integration (all scopes)",
    scopes: ALL_SCOPES,
    capabilities: [...CAPABILITIES],
    delegatedUsers: [DEMO_USERS.camille, DEMO_USERS.julien, DEMO_USERS.sophie, DEMO_USERS.lea],
  },
  readOnly: {
    keyId: "sandboxreadonly",
    secret: "sandbox-readonly-secret-not-for-production",
    label: "Demo integration (read-only)",
    scopes: READ_SCOPES,
    capabilities: [...READ_CAPABILITIES],
    delegatedUsers: [DEMO_USERS.camille, DEMO_USERS.julien],
  },
  limited: {
    keyId: "sandboxlimited",
    secret: "sandbox-limited-secret-not-for-production",
    label: "Demo integration (two routes, no delegation)",
    scopes: ["operations:read", "calendar:read"],
    routes: ["operations_list", "calendar_list"],
    capabilities: [],
    delegatedUsers: [],
  },
  portfolioManager: {
    keyId: "sandboxpm",
    secret: "sandbox-pm-secret-not-for-production",
    label: "Demo integration (portfolio manager: reads, and the daily writes)",
    scopes: [
      ...READ_SCOPES,
      "alerts:write",
      "notifications:write",
      "calendar:write",
      "tasks:write",
      "documents:write",
      "operations:write",
    ],
    routes: portfolioManagerRoutes,
    capabilities: [...READ_CAPABILITIES],
    delegatedUsers: [DEMO_USERS.camille, DEMO_USERS.julien],
  },
} satisfies Record<string, SandboxKey>;

export function hasScope(key: SandboxKey, scope: string): boolean {
  const family = scope.split(":")[0];
  return key.scopes.some((s) => s === scope || s === "*" || s === `${family}:*`);
}

/** Who the sandbox records as the author of a key's writes (notes, receipts, moves). */
export function serviceAccount(key: SandboxKey): string {
  return `apikey:${key.keyId}`;
}
