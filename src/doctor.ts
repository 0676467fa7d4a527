import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { OperationId } from "./api/catalogue.js";
import type { ApiClient } from "./api/client.js";
import type { Config, OAuthSettings } from "./config.js";
import { userMessage } from "./errors.js";
import { ApiError } from "./http/errors.js";
import { allowlistTerms } from "./inventory/allowlist.js";
import { StateKeys } from "./state/keys.js";
import { inspectRedis, type RedisFacts } from "./state/redis-health.js";
import { describeTelemetry } from "./telemetry/settings.js";
import { discoverIssuer } from "./transport/oauth.js";
import { OAuthUsers } from "./transport/oauth-users.js";
import { IntentMac } from "./writes/intent-mac.js";
import { damagedFiles, QUARANTINE_DIR } from "./writes/journal.js";

/** "warning": works, but a setting risks something (exit code unchanged). */
export type CheckStatus = "ok" | "warning" | "refused" | "failed" | "skipped";

export interface CheckRow {
  check: string;
  status: CheckStatus;
  detail: string;
}

interface Probe {
  check: string;
  operation: OperationId;
  input: object;
  delegated?: boolean;
  /** Writes: a request the API must refuse (unknown id, invalid body), so nothing is written. */
  write?: { expect: string; unchecked?: boolean };
}

const NIL_UUID = "00000000-0000-0000-0000-000000000000";

/** One harmless read per family, then one probe per write family that cannot write. */
const PROBES: Probe[] = [
  { check: "read portfolio", operation: "portfolio_get", input: {} },
  { check: "read operations", operation: "operations_list", input: { query: { limit: 1 } } },
  { check: "read deals", operation: "deals_list", input: { query: { limit: 1 } } },
  { check: "read SPVs", operation: "spvs_list", input: {} },
  { check: "read operators", operation: "operators_list", input: { query: { limit: 1 } } },
  { check: "read taxonomies", operation: "taxonomies_get", input: {} },
  { check: "read calendar", operation: "calendar_list", input: { query: { limit: 1 } } },
  { check: "read notifications", operation: "notifications_unread_count", input: {} },
  { check: "read reporting (INREV)", operation: "reports_inrev", input: {} },
  {
    check: "read workflows",
    operation: "workflow_recommendations_preview",
    input: { body: { limit: 1 } },
  },
  { check: "read my saved views", operation: "saved_views_list", input: {}, delegated: true },
  { check: "read my dashboards", operation: "custom_dashboards_list", input: {}, delegated: true },
  {
    check: "write operation notes",
    operation: "operation_note_create",
    input: { path: { operation_id: NIL_UUID }, body: { content: "portfolio-mcp doctor probe" } },
    write: { expect: "a note on a non-existent operation" },
  },
  {
    check: "write workflows",
    operation: "workflow_create_from_recommendation",
    input: { path: { recommendation_id: "portfolio-mcp-doctor-probe" } },
    write: { expect: "a workflow from a non-existent recommendation" },
  },
  {
    check: "write SIREN resolution",
    operation: "siren_resolve",
    input: { path: { siren: "000000001" } },
    write: { expect: "a SIREN with a wrong checksum (never billed)" },
  },
  {
    check: "write my saved views",
    operation: "saved_view_update",
    input: { path: { view_id: NIL_UUID }, body: { name: "portfolio-mcp doctor probe" } },
    delegated: true,
    write: { expect: "an update of a non-existent view" },
  },
  {
    check: "write my dashboards",
    operation: "custom_dashboard_create",
    input: { body: { name: "" } },
    delegated: true,
    write: { expect: "a dashboard without a name", unchecked: true },
  },
];

/**
 * Checks what this configuration can actually do: the settings, the token exchange, the
 * delegated user, then every family the tools use. Nothing is written: write probes send a
 * request the API must refuse, and tell "allowed" (404, 409, 422) from "refused" (403).
 */
export async function runDoctor(config: Config, api: ApiClient): Promise<CheckRow[]> {
  const rows: CheckRow[] = [configurationRow(config)];
  // With Redis the journal lives there (its row counts the damaged entries), not in the directory.
  const keys = await StateKeys.existing(config.stateDir, config.writes.stateSecret);
  rows.push(
    config.redis
      ? redisRow(await inspectRedis(config.redis, keys))
      : await journalRow(config.stateDir, keys),
  );
  rows.push(auditRow(config));
  rows.push(telemetryRow(config));
  rows.push(...(await signInRows(config, api)));
  const signedIn = await tokenRow(api);
  rows.push(signedIn);
  if (signedIn.status !== "ok") return rows; // nothing else can work without a bearer
  const user = config.api.delegatedUser;
  rows.push(user ? await delegatedUserRow(api) : NO_DELEGATED_USER);
  for (const probe of PROBES) {
    if (probe.delegated && !user) {
      rows.push({ check: probe.check, status: "skipped", detail: "no delegated user" });
    } else if (probe.write && config.writes.readOnly) {
      rows.push({
        check: probe.check,
        status: "skipped",
        detail: "read-only mode (PORTFOLIO_READ_ONLY)",
      });
    } else {
      rows.push(await runProbe(api, probe));
    }
  }
  return rows;
}

function configurationRow(config: Config): CheckRow {
  return {
    check: "configuration",
    status: config.warnings.length > 0 ? "failed" : "ok",
    detail:
      config.warnings.length > 0
        ? config.warnings.join("; ")
        : `${config.api.baseUrl}, key ${config.api.keyId}${config.api.routesFile ? `, routes from ${config.api.routesFile}` : ""}`,
  };
}

/** Whether the key signs in, and whether our clock had to be corrected to do it. */
async function tokenRow(api: ApiClient): Promise<CheckRow> {
  try {
    await api.tokens.get();
    const offset = Math.round(api.tokens.clockOffsetMs / 1000);
    return {
      check: "token exchange",
      status: "ok",
      detail: offset === 0 ? "signed in" : `signed in after correcting a clock gap of ${offset} s`,
    };
  } catch (error) {
    return {
      check: "token exchange",
      status: "failed",
      detail: userMessage(error, "the token exchange"),
    };
  }
}

const NO_DELEGATED_USER: CheckRow = {
  check: "delegated user",
  status: "skipped",
  detail: "none configured: the /users/me tools will refuse",
};

/** Whom the `/users/me*` calls act for, as the API names them. */
async function delegatedUserRow(api: ApiClient): Promise<CheckRow> {
  try {
    const me = (await api.call("me_get", {})).data as { display_name?: string; id?: string };
    return {
      check: "delegated user",
      status: "ok",
      detail: `acts for ${me.display_name ?? ""} (${me.id ?? "?"})`.trim(),
    };
  } catch (error) {
    return {
      check: "delegated user",
      status: "refused",
      detail: userMessage(error, "reading the delegated user"),
    };
  }
}

async function journalRow(stateDir: string, keys: StateKeys | null): Promise<CheckRow> {
  // No state secret yet: no intent file there can have been written by this server.
  const key = keys ? keys.derive("intent-mac") : randomBytes(32);
  const quarantined = await damagedFiles(stateDir, new IntentMac(key));
  return {
    check: "journal",
    status: quarantined > 0 ? "failed" : "ok",
    detail:
      quarantined > 0
        ? `${quarantined} damaged intent file(s) under ${join(stateDir, "intents")} (moved to ${QUARANTINE_DIR}/ at startup, each named in the log): check by hand whether a confirmed write was delivered`
        : `no damaged intent files in ${stateDir}`,
  };
}

/** Where the audit trail goes, by transport (PORTFOLIO_AUDIT_FILE, or the defaults). */
export function auditRow(config: Pick<Config, "audit" | "stateDir">): CheckRow {
  const { file, identity, arguments: args, replica } = config.audit;
  const kept = `identity ${identity}, arguments ${args}, replica ${replica}`;
  const detail =
    file === "off"
      ? "off (PORTFOLIO_AUDIT_FILE=off): no record of who read or wrote what is kept"
      : file === "-"
        ? `to stderr, beside the logs (${kept})`
        : file
          ? `${file} (${kept}; verify with portfolio-mcp audit verify)`
          : `serve --http: ${join(config.stateDir, "audit", "audit.jsonl")}; stdio: off (set PORTFOLIO_AUDIT_FILE to keep one) (${kept})`;
  return { check: "audit trail", status: file === "off" ? "warning" : "ok", detail };
}

/** Where traces and metrics go (the OTEL_* variables); /metrics is always there over HTTP. */
export function telemetryRow(config: Pick<Config, "telemetry">): CheckRow {
  return {
    check: "telemetry",
    status: "ok",
    detail: `${describeTelemetry(config.telemetry)}; serve --http also answers GET /metrics (Prometheus)`,
  };
}

/**
 * The Redis replicas share: reachable, persistent enough for the write journal (AOF), and the
 * sealing secret every replica needs alongside it.
 */
export function redisRow(facts: RedisFacts): CheckRow {
  const check = "shared state (Redis)";
  if (facts.unreachable)
    return {
      check,
      status: "failed",
      detail: `The shared state store (Redis at ${facts.where}) does not answer (${facts.unreachable}): check that Redis runs and that PORTFOLIO_REDIS_URL points at it.`,
    };
  const failures: string[] = [];
  const warnings: string[] = [];
  if (facts.secret?.verdict === "different") failures.push(facts.secret.mismatch);
  if (facts.quarantined > 0)
    failures.push(
      `${facts.quarantined} damaged intent(s) in ${facts.prefix}intents-quarantine (each named in the log): check by hand whether a confirmed write was delivered`,
    );
  let persistence: string;
  if (facts.appendonly === null) {
    persistence = "persistence unknown (CONFIG GET refused): make sure AOF is on";
  } else if (facts.appendonly !== "yes") {
    persistence = `AOF off (appendonly ${facts.appendonly})`;
    warnings.push(
      "AOF is recommended for the write journal (appendonly yes, appendfsync everysec): without it a Redis restart forgets the confirmed writes it held",
    );
  } else {
    persistence = `AOF on (appendfsync ${facts.appendfsync ?? "?"})`;
    if (facts.appendfsync === "no")
      warnings.push("appendfsync no leaves fsync to the OS: use everysec or always");
  }
  const summary = `PONG from ${facts.where}, prefix ${facts.prefix}, ${persistence}, ${facts.unfinished} confirmed write(s) unfinished`;
  return {
    check,
    status: failures.length > 0 ? "failed" : warnings.length > 0 ? "warning" : "ok",
    detail: [summary, ...failures, ...warnings].join("; "),
  };
}

/**
 * Sign-in with the identity provider, when configured: its metadata, its keys, the users file,
 * and the audience tokens must carry. Nothing is signed in; only public documents are read.
 */
export async function signInRows(
  config: Config,
  api: Pick<ApiClient, "routes">,
  fetchFn: typeof fetch = fetch,
): Promise<CheckRow[]> {
  const oauth = config.server.oauth;
  if (!oauth) return [];
  const rows = [signInUsersRow(config, oauth, api), signInAudienceRow(config, oauth)];
  let jwksUri: string;
  try {
    const metadata = await discoverIssuer(oauth.issuer, fetchFn);
    jwksUri = metadata.jwks_uri;
    rows.push({ check: "sign-in issuer", status: "ok", detail: `metadata at ${metadata.source}` });
  } catch (error) {
    rows.push({ check: "sign-in issuer", status: "failed", detail: (error as Error).message });
    return rows;
  }
  rows.push(await signingKeysRow(jwksUri, fetchFn));
  return rows;
}

/** The users file: readable, and each entry as meant. */
function signInUsersRow(
  config: Config,
  oauth: OAuthSettings,
  api: Pick<ApiClient, "routes">,
): CheckRow {
  try {
    const users = OAuthUsers.fromFile(
      oauth.usersFile,
      oauth.userClaim,
      allowlistTerms(api.routes, {
        readOnly: config.writes.readOnly,
        allowSensitive: new Set(config.writes.allowSensitive),
      }),
    );
    return {
      check: "sign-in users",
      status: users.warnings.length > 0 ? "failed" : "ok",
      detail:
        users.warnings.join("; ") ||
        `${users.size} user(s) in ${oauth.usersFile}, keyed by the ${oauth.userClaim} claim`,
    };
  } catch (error) {
    return { check: "sign-in users", status: "failed", detail: (error as Error).message };
  }
}

/** The audience access tokens must carry. */
function signInAudienceRow(config: Config, oauth: OAuthSettings): CheckRow {
  const audience =
    oauth.audience ??
    (config.server.publicUrl ? `${config.server.publicUrl}/mcp` : "the bound address's /mcp");
  return {
    check: "sign-in audience",
    status: "ok",
    detail: `access tokens must be issued for ${audience}${config.server.publicUrl || oauth.audience ? "" : " (set PORTFOLIO_PUBLIC_URL behind a proxy)"}`,
  };
}

/** The issuer publishes at least one public key a token could be checked with. */
async function signingKeysRow(jwksUri: string, fetchFn: typeof fetch): Promise<CheckRow> {
  try {
    const response = await fetchFn(jwksUri, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const { keys } = (await response.json()) as { keys?: Array<{ kty?: string; use?: string }> };
    const signing = (keys ?? []).filter((k) => k.kty !== "oct" && (k.use ?? "sig") === "sig");
    return {
      check: "sign-in keys",
      status: signing.length > 0 ? "ok" : "failed",
      detail:
        signing.length > 0
          ? `${signing.length} signing key(s) at ${jwksUri}`
          : `no public signing key at ${jwksUri}: no token could be checked`,
    };
  } catch (error) {
    return {
      check: "sign-in keys",
      status: "failed",
      detail: `${jwksUri} cannot be read (${(error as Error).message})`,
    };
  }
}

async function runProbe(api: ApiClient, probe: Probe): Promise<CheckRow> {
  // The key's contract is what the key may call: an operation it leaves out is refused.
  if (!api.routes.has(probe.operation))
    return {
      check: probe.check,
      status: "refused",
      detail: `the key's contract does not list ${probe.operation} (nothing was sent)`,
    };
  try {
    await api.call(probe.operation, probe.input as never, { unchecked: probe.write?.unchecked });
    if (probe.write) {
      return {
        check: probe.check,
        status: "failed",
        detail: `the API accepted ${probe.write.expect}; check what it wrote`,
      };
    }
    return { check: probe.check, status: "ok", detail: "" };
  } catch (error) {
    if (probe.write && error instanceof ApiError && [404, 409, 422].includes(error.status ?? 0)) {
      return {
        check: probe.check,
        status: "ok",
        detail: `allowed (probe: ${probe.write.expect}, refused with ${error.status}; nothing written)`,
      };
    }
    const refused =
      error instanceof ApiError && ["forbidden", "bad_request", "not_found"].includes(error.code);
    return {
      check: probe.check,
      status: refused ? "refused" : "failed",
      detail: userMessage(error, probe.check),
    };
  }
}

/** The rows as an aligned table, one line each. */
export function formatTable(rows: CheckRow[]): string {
  const width = Math.max(...rows.map((r) => r.check.length), "check".length);
  const line = (a: string, b: string, c: string) =>
    `${a.padEnd(width)}  ${b.padEnd(8)}  ${c}`.trimEnd();
  return [
    line("check", "result", "detail"),
    line("-".repeat(width), "--------", "------"),
    ...rows.map((r) => line(r.check, r.status, r.detail)),
  ].join("\n");
}

/** 0: everything works; 1: cannot sign in; 2: some families are refused or failed. */
export function exitCode(rows: CheckRow[]): number {
  if (rows.some((r) => r.check === "token exchange" && r.status === "failed")) return 1;
  return rows.some((r) => r.status === "refused" || r.status === "failed") ? 2 : 0;
}
