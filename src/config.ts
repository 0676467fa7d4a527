import { homedir, hostname } from "node:os";
import { describeIssue } from "@portfolio-mcp/field-errors";
import { z } from "zod";
import { closest } from "./closest.js";
import { defaultStateDir } from "./state-dir.js";
import {
  TelemetrySettingError,
  type TelemetrySettings,
  telemetrySettings,
} from "./telemetry/settings.js";

export { defaultStateDir };

export const DEFAULT_TOKEN_PREFIX = "SERVICE-EXTERNAL-API-TOKEN-V1";
export const DEFAULT_DELEGATION_HEADER_PREFIX = "X-Service-Delegated-User";

export type DelegatedUser = { email: string } | { id: string };

export interface ApiSettings {
  baseUrl: string;
  keyId: string;
  secret: string;
  tokenPrefix: string;
  delegationHeaderPrefix: string;
  delegatedUser: DelegatedUser | null;
  routesFile: string | null;
  /** The key's contract export (OpenAPI 3.1, JSON or YAML): what the server may offer. */
  contractFile: string | null;
  timeoutMs: number;
  maxRetries: number;
  maxRetryWaitSeconds: number;
  /** The API key's rate, requests a minute, for every replica together. */
  rateLimitPerMinute: number;
  /** The part of it one client (principal) may use, 0 < share <= 1. */
  sharePerClient: number;
  /** One client's upstream requests under way at once, fleet-wide. */
  maxInFlightPerClient: number;
  /** Largest answer read from the API; a larger one is refused unread. */
  maxResponseBytes: number;
}

export interface ServerSettings {
  /** The bearer HTTP clients must present; generated at startup when unset. */
  mcpToken: string | null;
  /** Browser origins allowed besides the loopback ones (HTTP mode). */
  allowedOrigins: string[];
  /** Hosts (host:port) allowed in the Host header besides the bound address (HTTP mode). */
  allowedHosts: string[];
  /** Where exported files are also saved; none by default. */
  exportDir: string | null;
  /** JSON file of client tokens (SHA-256) and the user each acts for; HTTP mode. */
  clientsFile: string | null;
  /** Sessions in all; when full, room is made for a client holding fewer (sessions.ts). */
  maxSessions: number;
  /** Sessions one client may hold; its least recently used idle one is closed to make room. */
  maxSessionsPerClient: number;
  sessionIdleSeconds: number;
  /** Requests per minute per client token (HTTP mode). */
  rateLimitPerMinute: number;
  /** Sockets one peer address may hold open; its oldest idle one is closed for a new one. */
  maxConnectionsPerPeer: number;
  maxBodyBytes: number;
  shutdownGraceSeconds: number;
  /**
   * How clients reach this server (scheme, host, port; behind a reverse proxy, the proxy's):
   * the base of the OAuth resource URL and of its metadata URL. null: the bound address.
   */
  publicUrl: string | null;
  /** Sign-in with the organisation's identity provider; null: bearer tokens only. */
  oauth: OAuthSettings | null;
}

/** The shared HTTP deployment as an OAuth 2.1 protected resource (README, "Sign-in"). */
export interface OAuthSettings {
  /** The authorization server's issuer identifier, exactly as its metadata states it. */
  issuer: string;
  /** The `aud` access tokens must carry; null: the public URL's /mcp. */
  audience: string | null;
  /** The claim that names the user in the users file (default `email`). */
  userClaim: string;
  /** JSON file mapping the claim's values to delegated users. */
  usersFile: string;
}

/**
 * A way a human confirms a write: the client's own form (elicitation), an MCP Apps card, or the
 * assistant calling confirm_write after asking in the chat.
 */
export type ConfirmWay = "form" | "app" | "two-step";

/** The ways allowed, in order of preference: a preset name, one way, or a list of ways. */
export type ConfirmMode = "auto" | "elicitation" | ConfirmWay | readonly ConfirmWay[];

const CONFIRM_PRESETS: Record<string, readonly ConfirmWay[]> = {
  auto: ["form", "app", "two-step"],
  elicitation: ["form"],
  form: ["form"],
  app: ["app"],
  "two-step": ["two-step"],
};

/** The ways a mode allows, in order: the first one the client supports is used. */
export function confirmWays(mode: ConfirmMode): readonly ConfirmWay[] {
  if (typeof mode !== "string") return mode;
  return CONFIRM_PRESETS[mode] ?? [];
}

/** PORTFOLIO_CONFIRM: `auto`, `elicitation`, or a comma list of form, app and two-step. */
const confirmSetting = z.string().transform((value, ctx): ConfirmMode => {
  const names = list(value);
  if (names.length === 1 && names[0] && CONFIRM_PRESETS[names[0]]) return names[0] as ConfirmMode;
  const ways: ConfirmWay[] = [];
  for (const name of names) {
    if (name !== "form" && name !== "app" && name !== "two-step") {
      ctx.addIssue({
        code: "custom",
        message: `${JSON.stringify(name)} is not a way to confirm: use auto, elicitation, or a comma list of form, app and two-step`,
      });
      return z.NEVER;
    }
    if (!ways.includes(name)) ways.push(name);
  }
  if (ways.length === 0) {
    ctx.addIssue({ code: "custom", message: "must name at least one way to confirm" });
    return z.NEVER;
  }
  return ways;
});

export interface WriteSettings {
  /** No write tool at all when true. */
  readOnly: boolean;
  confirm: ConfirmMode;
  /** How long a two-step confirmation stays valid. */
  confirmationTtlSeconds: number;
  /** Drafts one user may leave unconfirmed at once. */
  maxPendingDrafts: number;
  /** Seals input-required request states; null: a key generated into the state directory. */
  stateSecret: string | null;
  /**
   * Sensitive operations the operator offers anyway (RGPD erasure, user administration,
   * settings, synchronisation and imports, deletions), by family or operation id.
   */
  allowSensitive: string[];
}

/** Shared state for several replicas; null keeps everything in the state directory. */
export interface RedisSettings {
  /** redis:// or rediss:// (TLS), with user, password and database in the URL. */
  url: string;
  /** Put before every key, so several deployments can share one Redis. */
  prefix: string;
}

export const DEFAULT_REDIS_PREFIX = "portfolio-mcp:";

/** The audit trail (README, "Audit trail"). */
export interface AuditConfig {
  /**
   * A JSON-lines file, `-` for stderr beside the logs, `off`; null when not set: off over stdio,
   * `<state dir>/audit/audit.jsonl` for serve --http.
   */
  file: string | null;
  /** `email`: the signed-in person's e-mail is kept; `hash` (default): a hash of the principal. */
  identity: "hash" | "email";
  /** `digest` (default): an HMAC of the arguments; `full`: the arguments, secrets removed. */
  arguments: "digest" | "full";
  maxBytes: number;
  /** Whose chain it is: PORTFOLIO_REPLICA_ID, else the host name (a pod's name). */
  replica: string;
}

export interface Config {
  api: ApiSettings;
  server: ServerSettings;
  writes: WriteSettings;
  audit: AuditConfig;
  /** Traces and metrics over OTLP, from the standard OTEL_* variables (off without an endpoint). */
  telemetry: TelemetrySettings;
  redis: RedisSettings | null;
  stateDir: string;
  /** Whether PORTFOLIO_STATE_DIR (or --state-dir) named it, rather than the default. */
  stateDirExplicit: boolean;
  logLevel: LogLevel;
  /** Settings that look meant for us but are not ours: typos, mostly. One sentence each. */
  warnings: string[];
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const blankIsUnset = (value: unknown) =>
  typeof value === "string" && value.trim() === "" ? undefined : value;
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankIsUnset, schema.optional());
const integer = (min: number, max: number, fallback: number) =>
  z.preprocess(
    (value) => blankIsUnset(value) ?? String(fallback),
    z
      .string()
      .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
      .transform(Number)
      .pipe(z.number().min(min).max(max)),
  );

/**
 * Every setting the server reads, by environment variable. CLI flags override the environment
 * under the same names. The secret has no flag: command lines are visible to other users.
 */
const variables = z.object({
  PORTFOLIO_API_BASE_URL: z
    .preprocess(
      (v) => (typeof v === "string" ? v.trim().replace(/\/+$/, "") : v),
      z
        .string()
        .regex(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?\/v1$/, "must be an http(s) URL ending with /v1"),
    )
    .describe("Partner API base address, ending with /v1."),
  PORTFOLIO_API_KEY_ID: z
    .string()
    .regex(/^[a-z0-9]{4,24}$/, "must be 4 to 24 lowercase letters or digits")
    .describe("Public API key id (4-24 of a-z0-9)."),
  PORTFOLIO_API_SECRET: z
    .string()
    .min(1, "must not be empty")
    .describe("API secret; signs the token exchange only, never logged. Environment only."),
  PORTFOLIO_DELEGATED_USER_EMAIL: optional(
    // One header line: no whitespace, and no control character (NUL is not whitespace).
    z.string().regex(/^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u, "must be an e-mail address"),
  ).describe("User the server acts for on /users/me routes (or the next variable; not both)."),
  PORTFOLIO_DELEGATED_USER_ID: optional(
    z.string().regex(/^[!-~]{1,255}$/, "must be 1 to 255 printable characters"),
  ).describe("Same, by user id."),
  PORTFOLIO_TOKEN_PREFIX: optional(
    z.string().regex(/^[!-~]{1,128}$/, "must be one line of printable characters"),
  ).describe("First line of the signed message (default SERVICE-EXTERNAL-API-TOKEN-V1)."),
  PORTFOLIO_DELEGATION_HEADER_PREFIX: optional(
    z.string().regex(/^[A-Za-z0-9-]{1,64}$/, "must be a header name prefix (letters, digits, -)"),
  ).describe("Delegation header prefix (default X-Service-Delegated-User)."),
  PORTFOLIO_ROUTES_FILE: optional(z.string()).describe(
    "JSON file moving operations to other methods and paths (ignored with a contract).",
  ),
  PORTFOLIO_CONTRACT_FILE: optional(z.string()).describe(
    "The API key's contract export (OpenAPI, JSON or YAML): every operation it lists is offered.",
  ),
  PORTFOLIO_ALLOW_SENSITIVE: optional(
    z.string().regex(/^[\w.,\s-]*$/, "must be a comma-separated list of families or operation ids"),
  ).describe(
    "Sensitive operations to offer anyway (deletions, RGPD erasure, users, settings, sync, imports): families or ids, comma-separated.",
  ),
  PORTFOLIO_STATE_DIR: optional(z.string()).describe(
    "Durable state (the write journal); default: the per-user data directory.",
  ),
  PORTFOLIO_REDIS_URL: optional(
    z
      .string()
      .regex(/^rediss?:\/\/\S*$/, "must be a redis:// or rediss:// URL")
      .refine(isUrl, "must be a redis:// or rediss:// URL"),
  ).describe(
    "Redis shared by several replicas (bearer, 429 cooldown, write journal); TLS and password in the URL. Environment only.",
  ),
  PORTFOLIO_REDIS_PREFIX: optional(
    z.string().regex(/^[A-Za-z0-9:_.-]{1,64}$/, "must be 1 to 64 of letters, digits, : _ . -"),
  ).describe("Put before every Redis key, to keep deployments apart (default portfolio-mcp:)."),
  PORTFOLIO_LOG_LEVEL: optional(z.enum(LOG_LEVELS)).describe(
    "fatal, error, warn, info (default), debug, trace or silent; logs go to stderr.",
  ),
  PORTFOLIO_HTTP_TIMEOUT_SECONDS: integer(1, 600, 30).describe(
    "Upstream response timeout, 1-600 (default 30).",
  ),
  PORTFOLIO_MCP_TOKEN: optional(
    z.string().regex(/^[!-~]{16,512}$/, "must be 16 to 512 printable characters"),
  ).describe("Bearer HTTP clients must send (default: generated and printed at startup)."),
  PORTFOLIO_MCP_ALLOWED_ORIGINS: optional(z.string()).describe(
    "Comma-separated browser origins allowed besides loopback (HTTP).",
  ),
  PORTFOLIO_MCP_ALLOWED_HOSTS: optional(z.string()).describe(
    "Comma-separated host:port values allowed in Host besides the bound address (HTTP).",
  ),
  PORTFOLIO_MCP_CLIENTS_FILE: optional(z.string()).describe(
    "JSON file of client token hashes, each with its delegated user (HTTP; replaces PORTFOLIO_MCP_TOKEN).",
  ),
  PORTFOLIO_PUBLIC_URL: optional(
    z
      .string()
      .transform((v) => v.trim().replace(/\/+$/, ""))
      .pipe(
        z
          .string()
          .regex(
            /^https?:\/\/[^\s/?#]+$/,
            "must be the origin clients reach this server at, such as https://mcp.example.com (no path: the server answers at /mcp and /.well-known/…)",
          ),
      ),
  ).describe(
    "How clients reach this server behind a proxy (https://mcp.example.com); builds the OAuth resource URL (HTTP).",
  ),
  PORTFOLIO_OAUTH_ISSUER: optional(
    z
      .string()
      .trim()
      .refine(
        secureUrl,
        "must be the authorization server's issuer URL, https:// (http:// only on loopback)",
      ),
  ).describe(
    "Sign-in with your identity provider: its OAuth issuer URL; clients then present its access tokens (HTTP).",
  ),
  PORTFOLIO_OAUTH_AUDIENCE: optional(
    z.string().trim().refine(isUrl, "must be a URL (the resource access tokens are issued for)"),
  ).describe("The audience access tokens must carry (default: the public URL's /mcp)."),
  PORTFOLIO_OAUTH_USERS_FILE: optional(z.string()).describe(
    "JSON file of the users allowed to sign in, each with its delegated user (with PORTFOLIO_OAUTH_ISSUER).",
  ),
  PORTFOLIO_OAUTH_USER_CLAIM: optional(
    z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, "must be a claim name (letters, digits, _ . : -)"),
  ).describe("The access-token claim that names the user in the users file (default email)."),
  PORTFOLIO_MCP_MAX_SESSIONS: integer(1, 100_000, 200).describe(
    "Concurrent HTTP sessions at most; when full, a client holding fewer than the largest holder takes that holder's least recently used idle one (default 200).",
  ),
  PORTFOLIO_MCP_MAX_SESSIONS_PER_CLIENT: integer(1, 100_000, 20).describe(
    "HTTP sessions one client may hold; its least recently used idle one is closed first (default 20).",
  ),
  PORTFOLIO_MCP_SESSION_IDLE_SECONDS: integer(1, 86_400, 1800).describe(
    "An HTTP session idle this long is closed (default 1800).",
  ),
  PORTFOLIO_MCP_RATE_LIMIT_PER_MINUTE: integer(1, 1_000_000, 600).describe(
    "Requests per minute per client token over HTTP (default 600).",
  ),
  PORTFOLIO_MCP_MAX_CONNECTIONS_PER_PEER: integer(1, 100_000, 512).describe(
    "Sockets one client address (an IPv6 /64) may hold open over HTTP; past it, its oldest idle one is closed, or the new one refused (default 512; behind a reverse proxy, above its connections to this server).",
  ),
  PORTFOLIO_MCP_MAX_BODY_BYTES: integer(1024, 104_857_600, 1_048_576).describe(
    "Largest HTTP request body or stdio message, in bytes (default 1048576).",
  ),
  PORTFOLIO_SHUTDOWN_GRACE_SECONDS: integer(0, 300, 10).describe(
    "How long in-flight calls may finish on SIGTERM/SIGINT (default 10).",
  ),
  PORTFOLIO_EXPORT_DIR: optional(z.string()).describe(
    "Where export_inrev_report also saves the workbook.",
  ),
  PORTFOLIO_CONFIRM: optional(confirmSetting).describe(
    "How a human confirms writes: auto (default: form, else app card, else two-step), elicitation, app, two-step, or a comma list of form, app, two-step in order of preference.",
  ),
  PORTFOLIO_READ_ONLY: optional(z.enum(["true", "false", "1", "0"])).describe(
    "true registers no write tool (default false).",
  ),
  PORTFOLIO_CONFIRMATION_TTL_SECONDS: integer(30, 86_400, 900).describe(
    "How long a drafted write can be confirmed, 30-86400 (default 900).",
  ),
  PORTFOLIO_STATE_SECRET: optional(
    z.string().min(32, "must be at least 32 characters (a random secret)"),
  ).describe(
    "Key authenticating stored writes and sealing confirmations; required with PORTFOLIO_REDIS_URL, the same on every replica; default: generated once into the state directory. Environment only.",
  ),
  PORTFOLIO_AUDIT_FILE: optional(
    z.string().regex(/^[^\0\r\n]{1,4096}$/, "must be a file path, - (stderr) or off"),
  ).describe(
    "The audit trail: a JSON-lines file, - for stderr, or off (default: off over stdio; <state dir>/audit/audit.jsonl for serve --http).",
  ),
  PORTFOLIO_AUDIT_IDENTITY: optional(z.enum(["hash", "email"])).describe(
    "What the audit trail keeps of a signed-in person: hash (default, of the principal) or email.",
  ),
  PORTFOLIO_AUDIT_ARGUMENTS: optional(z.enum(["digest", "full"])).describe(
    "What it keeps of arguments: digest (default, an HMAC; equal arguments match) or full (secrets and share tokens removed).",
  ),
  PORTFOLIO_AUDIT_MAX_MEGABYTES: integer(1, 100_000, 64).describe(
    "An audit file past this size is renamed aside and a new one continues the chain (default 64).",
  ),
  PORTFOLIO_REPLICA_ID: optional(
    z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be 1 to 64 of letters, digits, _ . -"),
  ).describe("This replica's name in the audit trail and telemetry (default: the host name)."),
  PORTFOLIO_MAX_PENDING_DRAFTS: integer(1, 1000, 20).describe(
    "Drafted writes one user may leave unconfirmed at once, 1-1000 (default 20).",
  ),
  PORTFOLIO_SANDBOX: optional(z.enum(["true", "false", "1", "0", "auto"])).describe(
    "true is --sandbox: the embedded sandbox, its demo data and demo credentials; auto: the sandbox unless PORTFOLIO_API_BASE_URL is set (the container image's default).",
  ),
  PORTFOLIO_MAX_RETRIES: integer(0, 10, 3).describe(
    "Retries of one upstream call, 0-10 (default 3).",
  ),
  PORTFOLIO_MAX_RETRY_WAIT_SECONDS: integer(0, 3600, 30).describe(
    "Longest a call waits for the API's rate limit (a 429 cooldown, its client's turn), 0-3600 (default 30).",
  ),
  PORTFOLIO_API_RATE_LIMIT_PER_MINUTE: integer(1, 1_000_000, 600).describe(
    "The API key's rate limit in requests a minute, all replicas together: the administrator's figure (default 600).",
  ),
  PORTFOLIO_API_SHARE_PER_CLIENT: integer(1, 100, 50).describe(
    "Percent of the key's rate one client may use, 1-100 (default 50).",
  ),
  PORTFOLIO_API_MAX_IN_FLIGHT_PER_CLIENT: integer(1, 1000, 8).describe(
    "Upstream requests one client may have under way at once, 1-1000 (default 8).",
  ),
  PORTFOLIO_MAX_RESPONSE_BYTES: integer(65_536, 1_073_741_824, 20_971_520).describe(
    "Largest Partner API answer read, in bytes, 65536-1073741824; a larger one is refused unread (default 20971520, 20 MiB).",
  ),
});

export type VariableName = keyof z.input<typeof variables>;

/** Every variable with what it means, for `--help` and the README's table. */
export function describeVariables(): Array<{ name: VariableName; description: string }> {
  return Object.entries(variables.shape).map(([name, schema]) => ({
    name: name as VariableName,
    description: schema.description ?? "",
  }));
}

/**
 * `PORTFOLIO_*` variables this server does not know, each with the known name it most likely
 * meant: a typo such as PORTFOLIO_DELEGATED_USER_MAIL must not pass in silence.
 */
export function unknownVariables(env: NodeJS.ProcessEnv): string[] {
  const known = Object.keys(variables.shape);
  return Object.keys(env)
    .filter((name) => name.startsWith("PORTFOLIO_") && !known.includes(name))
    .sort()
    .map((name) => {
      const near = closest(name, known);
      return `${name} is not a setting of this server${near ? `; did you mean ${near}?` : ""} (it is ignored; see --help)`;
    });
}

/**
 * PORTFOLIO_SANDBOX=true is --sandbox: what an installer (the MCP bundle) can set. `auto` is
 * the container image's: started with no settings it serves the demo, given an API it serves it.
 */
export function sandboxRequested(env: NodeJS.ProcessEnv): boolean {
  const value = env.PORTFOLIO_SANDBOX?.trim() ?? "";
  if (["", "false", "0"].includes(value)) return false;
  if (["true", "1"].includes(value)) return true;
  if (value === "auto") return !env.PORTFOLIO_API_BASE_URL?.trim();
  throw new ConfigError("PORTFOLIO_SANDBOX: must be true, false or auto");
}

/** A startup error: one line naming the variable and the rule. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface ConfigSources {
  env?: NodeJS.ProcessEnv;
  /** Values from CLI flags, by variable name; they win over the environment. */
  flags?: Partial<Record<VariableName, string>>;
  platform?: NodeJS.Platform;
  home?: string;
}

export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? process.env;
  const v = parseVariables(env, sources.flags);
  if (v.PORTFOLIO_REDIS_URL && !v.PORTFOLIO_STATE_SECRET)
    throw new ConfigError(
      "PORTFOLIO_STATE_SECRET: required with PORTFOLIO_REDIS_URL, the same on every replica (it authenticates the drafted writes they share and seals their confirmations)",
    );
  const replica = v.PORTFOLIO_REPLICA_ID ?? hostname();
  const telemetry = telemetryFrom(env, replica);
  return {
    api: apiSettings(v),
    server: serverSettings(v),
    writes: writeSettings(v),
    audit: auditConfig(v, replica),
    telemetry,
    redis: v.PORTFOLIO_REDIS_URL
      ? { url: v.PORTFOLIO_REDIS_URL, prefix: v.PORTFOLIO_REDIS_PREFIX ?? DEFAULT_REDIS_PREFIX }
      : null,
    stateDirExplicit: v.PORTFOLIO_STATE_DIR !== undefined,
    stateDir:
      v.PORTFOLIO_STATE_DIR ??
      defaultStateDir(env, sources.platform ?? process.platform, sources.home ?? homedir()),
    logLevel: v.PORTFOLIO_LOG_LEVEL ?? "info",
    warnings: unknownVariables(env),
  };
}

type Variables = z.output<typeof variables>;

/** The variables, a flag winning over the environment, checked at once: every error in one line. */
function parseVariables(env: NodeJS.ProcessEnv, flags: ConfigSources["flags"]): Variables {
  const merged: Record<string, unknown> = {};
  for (const name of Object.keys(variables.shape))
    merged[name] = flags?.[name as VariableName] ?? env[name];
  const parsed = variables.safeParse(merged);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues
        .map((issue) => {
          const { field, message } = describeIssue(issue);
          return `${field}: ${message}`;
        })
        .join("; "),
    );
  }
  return parsed.data;
}

/** The OTEL_* settings, their errors told as configuration errors. */
function telemetryFrom(env: NodeJS.ProcessEnv, replica: string): TelemetrySettings {
  try {
    return telemetrySettings(env, replica);
  } catch (error) {
    if (error instanceof TelemetrySettingError) throw new ConfigError(error.message);
    throw error;
  }
}

function apiSettings(v: Variables): ApiSettings {
  if (v.PORTFOLIO_DELEGATED_USER_EMAIL && v.PORTFOLIO_DELEGATED_USER_ID) {
    throw new ConfigError(
      "PORTFOLIO_DELEGATED_USER_EMAIL and PORTFOLIO_DELEGATED_USER_ID: set at most one (the API refuses both headers)",
    );
  }
  return {
    baseUrl: v.PORTFOLIO_API_BASE_URL,
    keyId: v.PORTFOLIO_API_KEY_ID,
    secret: v.PORTFOLIO_API_SECRET,
    tokenPrefix: v.PORTFOLIO_TOKEN_PREFIX ?? DEFAULT_TOKEN_PREFIX,
    delegationHeaderPrefix:
      v.PORTFOLIO_DELEGATION_HEADER_PREFIX ?? DEFAULT_DELEGATION_HEADER_PREFIX,
    delegatedUser: v.PORTFOLIO_DELEGATED_USER_EMAIL
      ? { email: v.PORTFOLIO_DELEGATED_USER_EMAIL }
      : v.PORTFOLIO_DELEGATED_USER_ID
        ? { id: v.PORTFOLIO_DELEGATED_USER_ID }
        : null,
    routesFile: v.PORTFOLIO_ROUTES_FILE ?? null,
    contractFile: v.PORTFOLIO_CONTRACT_FILE ?? null,
    timeoutMs: v.PORTFOLIO_HTTP_TIMEOUT_SECONDS * 1000,
    maxRetries: v.PORTFOLIO_MAX_RETRIES,
    maxRetryWaitSeconds: v.PORTFOLIO_MAX_RETRY_WAIT_SECONDS,
    rateLimitPerMinute: v.PORTFOLIO_API_RATE_LIMIT_PER_MINUTE,
    sharePerClient: v.PORTFOLIO_API_SHARE_PER_CLIENT / 100,
    maxInFlightPerClient: v.PORTFOLIO_API_MAX_IN_FLIGHT_PER_CLIENT,
    maxResponseBytes: v.PORTFOLIO_MAX_RESPONSE_BYTES,
  };
}

function serverSettings(v: Variables): ServerSettings {
  return {
    mcpToken: v.PORTFOLIO_MCP_TOKEN ?? null,
    allowedOrigins: list(v.PORTFOLIO_MCP_ALLOWED_ORIGINS),
    allowedHosts: list(v.PORTFOLIO_MCP_ALLOWED_HOSTS),
    exportDir: v.PORTFOLIO_EXPORT_DIR ?? null,
    clientsFile: v.PORTFOLIO_MCP_CLIENTS_FILE ?? null,
    maxSessions: v.PORTFOLIO_MCP_MAX_SESSIONS,
    maxSessionsPerClient: v.PORTFOLIO_MCP_MAX_SESSIONS_PER_CLIENT,
    sessionIdleSeconds: v.PORTFOLIO_MCP_SESSION_IDLE_SECONDS,
    rateLimitPerMinute: v.PORTFOLIO_MCP_RATE_LIMIT_PER_MINUTE,
    maxConnectionsPerPeer: v.PORTFOLIO_MCP_MAX_CONNECTIONS_PER_PEER,
    maxBodyBytes: v.PORTFOLIO_MCP_MAX_BODY_BYTES,
    shutdownGraceSeconds: v.PORTFOLIO_SHUTDOWN_GRACE_SECONDS,
    publicUrl: v.PORTFOLIO_PUBLIC_URL ?? null,
    oauth: oauthSettings(v),
  };
}

function writeSettings(v: Variables): WriteSettings {
  return {
    readOnly: v.PORTFOLIO_READ_ONLY === "true" || v.PORTFOLIO_READ_ONLY === "1",
    confirm: v.PORTFOLIO_CONFIRM ?? "auto",
    confirmationTtlSeconds: v.PORTFOLIO_CONFIRMATION_TTL_SECONDS,
    maxPendingDrafts: v.PORTFOLIO_MAX_PENDING_DRAFTS,
    stateSecret: v.PORTFOLIO_STATE_SECRET ?? null,
    allowSensitive: list(v.PORTFOLIO_ALLOW_SENSITIVE),
  };
}

function auditConfig(v: Variables, replica: string): AuditConfig {
  return {
    file: v.PORTFOLIO_AUDIT_FILE ?? null,
    identity: v.PORTFOLIO_AUDIT_IDENTITY ?? "hash",
    arguments: v.PORTFOLIO_AUDIT_ARGUMENTS ?? "digest",
    maxBytes: v.PORTFOLIO_AUDIT_MAX_MEGABYTES * 1_048_576,
    replica,
  };
}

/** The OAuth settings: all or nothing, each missing piece named. */
function oauthSettings(v: Variables): OAuthSettings | null {
  if (!v.PORTFOLIO_OAUTH_ISSUER) {
    const stray = (
      [
        "PORTFOLIO_OAUTH_AUDIENCE",
        "PORTFOLIO_OAUTH_USERS_FILE",
        "PORTFOLIO_OAUTH_USER_CLAIM",
      ] as const
    ).filter((name) => v[name] !== undefined);
    if (stray.length > 0)
      throw new ConfigError(
        `${stray.join(" and ")}: set PORTFOLIO_OAUTH_ISSUER too (without an issuer there is no sign-in to configure)`,
      );
    return null;
  }
  if (!v.PORTFOLIO_OAUTH_USERS_FILE)
    throw new ConfigError(
      "PORTFOLIO_OAUTH_USERS_FILE: required with PORTFOLIO_OAUTH_ISSUER (the users allowed to sign in, each with the user the server acts for)",
    );
  return {
    issuer: v.PORTFOLIO_OAUTH_ISSUER,
    audience: v.PORTFOLIO_OAUTH_AUDIENCE ?? null,
    userClaim: v.PORTFOLIO_OAUTH_USER_CLAIM ?? "email",
    usersFile: v.PORTFOLIO_OAUTH_USERS_FILE,
  };
}

/** https, or http on a loopback host (a local authorization server for development). */
function secureUrl(value: string): boolean {
  if (!isUrl(value)) return false;
  const url = new URL(value);
  if (url.search || url.hash) return false;
  if (url.protocol === "https:") return true;
  return (
    url.protocol === "http:" &&
    ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname.toLowerCase())
  );
}

function isUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
}
