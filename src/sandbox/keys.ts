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

export const FAMILIES = [
  "portfolio",
  "operations",
  "deals",
  "spvs",
  "operateurs",
  "taxonomies",
  "calendar",
  "notifications",
  "reporting",
  "workflows",
  "users",
] as const;

export const CAPABILITIES = [
  "user_self_service",
  "saved_views",
  "custom_dashboards",
  "rgpd_export",
  "rgpd_inventory",
  "rgpd_erasure",
] as const;

/** The demo keys. Their secrets are public on purpose: this is a sandbox. */
export const DEMO_KEYS = {
  full: {
    keyId: "sandboxdemo",
    secret: "sandbox-demo-secret-not-for-production",
    label: "Demo integration (all scopes)",
    scopes: FAMILIES.flatMap((f) => [`${f}:read`, `${f}:write`]),
    capabilities: [...CAPABILITIES],
    delegatedUsers: [DEMO_USERS.camille, DEMO_USERS.julien, DEMO_USERS.sophie, DEMO_USERS.lea],
  },
  readOnly: {
    keyId: "sandboxreadonly",
    secret: "sandbox-readonly-secret-not-for-production",
    label: "Demo integration (read-only)",
    scopes: FAMILIES.map((f) => `${f}:read`),
    capabilities: ["user_self_service", "saved_views", "custom_dashboards"],
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
} satisfies Record<string, SandboxKey>;

export function hasScope(key: SandboxKey, scope: string): boolean {
  const family = scope.split(":")[0];
  return key.scopes.some((s) => s === scope || s === "*" || s === `${family}:*`);
}
