import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "@portfolio-mcp/sandbox";
import { type ApiClient, connectApi } from "./api/client.js";
import { normaliseContract, readContractFile } from "./api/contract/load.js";
import type { Contract } from "./api/contract/types.js";
import { Directory } from "./api/directory.js";
import { unknownSensitiveEntries } from "./api/offer-summary.js";
import { withoutShareTokens } from "./api/response.js";
import { resolveRoutes } from "./api/routes.js";
import { banner } from "./app-banner.js";
import { clientAndProcessMetrics, upstreamMetrics } from "./app-metrics.js";
import { auditSink } from "./audit/sink.js";
import { AuditTrail } from "./audit/trail.js";
import {
  type Config,
  ConfigError,
  type ConfigSources,
  loadConfig,
  sandboxRequested,
} from "./config.js";
import { type Observer, Observers } from "./events.js";
import { allowlistTerms } from "./inventory/allowlist.js";
import { deliverability } from "./inventory/deliverable.js";
import { INVENTORY } from "./inventory/index.js";
import { createLogger, SecretRedactor } from "./log.js";
import { Readiness } from "./readiness.js";
import { type CallerSpec, createMcpServer, type ServerDeps } from "./server.js";
import { FleetCheck } from "./state/fleet-check.js";
import { StateKeys } from "./state/keys.js";
import type { SharedRedis } from "./state/redis.js";
import { type Metrics, NO_METRICS } from "./telemetry/metrics.js";
import { telemetrySink } from "./telemetry/sink.js";
import { startTelemetry } from "./telemetry/start.js";
import { RefusedOperations } from "./toolkit/refusals.js";
import type { Principal } from "./transport/clients.js";
import { VERSION } from "./version.js";
import { BilledOnRedis } from "./writes/billed.js";
import { WriteGate } from "./writes/gate.js";
import { IntentMac } from "./writes/intent-mac.js";
import { FileJournal } from "./writes/journal.js";
import { RedisJournal } from "./writes/redis-journal.js";
import { Sealer } from "./writes/seal.js";

export interface AppOptions {
  transport: "stdio" | "http";
  /** Start the embedded sandbox and use its demo credentials and demo user. */
  sandbox: boolean;
  port: number;
  host: string;
  /** HTTP without sessions: JSON answers, for load-balanced deployments. */
  stateless?: boolean;
  sources: ConfigSources;
}

/**
 * Wires the server: configuration, logger, API client, then one transport. Returns a function
 * that stops everything in order.
 */
export interface Prepared {
  config: Config;
  /** The key's contract export, when one is configured (or the embedded sandbox's). */
  contract: Contract | null;
  api: ApiClient;
  logger: ReturnType<typeof createLogger>;
  metrics: Metrics;
  sandbox: Sandbox | null;
  /** The Redis several replicas share, when PORTFOLIO_REDIS_URL is set. */
  redis: SharedRedis | null;
  /** Knows the secrets and bearers in play: what is kept of arguments goes through it. */
  redactor: SecretRedactor;
  close(): Promise<void>;
}

/**
 * Configuration (on the embedded sandbox if asked), logger, telemetry and API client. Traces and
 * metrics start only for a server (`transport` given), not for doctor.
 */
export async function prepare(
  options: Pick<AppOptions, "sandbox" | "sources"> & { transport?: AppOptions["transport"] },
  logLevel?: string,
  /** false for doctor: it inspects Redis itself and reports, rather than stop, when it fails. */
  shareState = true,
): Promise<Prepared> {
  // What has started so far: a later step that fails stops it, latest first.
  const started: Array<() => Promise<void>> = [];
  // Loaded only when asked for: a real deployment never pays for the simulator and its data.
  const sandbox = options.sandbox
    ? await (await import("@portfolio-mcp/sandbox")).startSandbox({ port: 0, host: "127.0.0.1" })
    : null;
  if (sandbox) started.push(() => sandbox.close());
  const config = await step(started, () =>
    loadConfig(sandbox ? withSandbox(options.sources, sandbox) : options.sources),
  );
  const redactor = redactorFor(config);
  const logger = createLogger({ level: logLevel ?? config.logLevel, redactor });
  const redis = shareState ? await step(started, () => openRedis(config, logger)) : null;
  if (redis) started.push(() => redis.close());
  const telemetry = await step(started, () =>
    startTelemetry(config.telemetry, logger, options.transport ?? null),
  );
  started.push(() => telemetry.close());
  const { metrics } = telemetry;
  const contract = await step(started, () => loadContract(config, sandbox));
  if (contract) config.warnings.push(...contractWarnings(config, contract));
  const api = connectApi({
    settings: config.api,
    routes: resolveRoutes(config.api.routesFile, contract),
    logger,
    redactor,
    userAgent: `portfolio-mcp/${VERSION}`,
    redis: redis ?? undefined,
    ...upstreamMetrics(metrics),
  });
  config.warnings.push(...unknownSensitiveEntries(api.routes, config.writes.allowSensitive));
  clientAndProcessMetrics(metrics, api);
  return {
    config,
    contract,
    api,
    logger,
    metrics,
    sandbox,
    redis,
    redactor,
    async close() {
      await api.close();
      await telemetry.close(); // what is left of traces and metrics goes out first
      await redis?.close();
      await sandbox?.close();
    },
  };
}

/** One step of a start; when it fails, what the earlier steps started is stopped, latest first. */
async function step<T>(started: Array<() => Promise<void>>, work: () => T | Promise<T>) {
  try {
    return await work();
  } catch (error) {
    for (const stop of started.toReversed()) await stop();
    throw error;
  }
}

/** The secrets the configuration holds, never to be written in a log line. */
function redactorFor(config: Config): SecretRedactor {
  const redactor = new SecretRedactor();
  if (config.writes.stateSecret) redactor.add(config.writes.stateSecret);
  const redisPassword = config.redis ? new URL(config.redis.url).password : "";
  if (redisPassword) redactor.add(decodeURIComponent(redisPassword));
  return redactor;
}

function contractWarnings(config: Config, contract: Contract): string[] {
  return [
    ...contract.warnings,
    ...(config.api.routesFile
      ? [
          `PORTFOLIO_ROUTES_FILE (${config.api.routesFile}) is ignored: the contract in ${contract.source} gives every operation its method and path.`,
        ]
      : []),
  ];
}

/** What a server needs besides its caller: built once, shared by every session. */
async function serverDeps(options: AppOptions) {
  const prepared = await prepare(options);
  const { config, api, logger, metrics, sandbox, redis } = prepared;
  for (const warning of [...config.warnings, ...transportWarnings(config, options.transport)])
    logger.warn(warning);
  // The sandbox forgets its data on exit, so its state is a fresh temporary directory unless
  // one was named explicitly.
  const dir =
    sandbox && !config.stateDirExplicit
      ? await mkdtemp(join(tmpdir(), "portfolio-mcp-sandbox-"))
      : config.stateDir;
  const keys = await StateKeys.open(dir, config.writes.stateSecret);
  const audit = openAudit(config, options.transport, dir, keys, prepared);
  // One emitter, two sinks: the audit trail's records and the metrics count the same events
  // (the trail first: what a reviewer needs is told before anything else).
  const sinks = [
    ...(audit ? [audit.sink] : []),
    ...(metrics === NO_METRICS ? [] : [telemetrySink(metrics)]),
  ];
  const observer = sinks.length > 0 ? new Observers(sinks) : undefined;
  const writes = config.writes.readOnly
    ? undefined
    : await openWrites(config, prepared, dir, keys, observer);
  const deps: ServerDeps = {
    api,
    directory: new Directory(api),
    logger,
    exportDir: config.server.exportDir,
    writes: writes && {
      gate: writes.gate,
      mode: writes.mode,
      sealer: writes.sealer,
      // A fleet remembers billable calls on its Redis: the next draft may reach another replica.
      billed: redis ? new BilledOnRedis(redis) : undefined,
    },
    allowSensitive: new Set(config.writes.allowSensitive),
    observer,
    refusals: new RefusedOperations(),
  };
  return {
    ...prepared,
    deps,
    fleet: writes?.fleet ?? null,
    auditFile: audit?.file ?? null,
    async close() {
      audit?.trail.close();
      await prepared.close();
    },
  };
}

/**
 * Everything the stdio server needs, prepared while its transport already answers discovery
 * (src/app-stdio.ts): configuration, the embedded sandbox, the contract, the API client, the
 * write journal, and the one caller a stdio process serves.
 */
export async function prepareStdio(options: AppOptions) {
  const sandbox = options.sandbox || sandboxRequested(options.sources.env ?? process.env);
  const { config, logger, deps, close } = await serverDeps({ ...options, sandbox });
  const caller: CallerSpec = {
    sessionId: `stdio-${randomUUID()}`,
    delegatedUser: config.api.delegatedUser,
    client: null,
    readOnly: false,
    allowedTools: null,
  };
  return { deps, caller, logger, maxMessageBytes: config.server.maxBodyBytes, close };
}

/**
 * Wires the HTTP server: configuration, logger, API client, then the transport. Returns a
 * function that stops everything in order.
 */
export async function startApp(options: AppOptions): Promise<() => Promise<void>> {
  const transport = loadTransport();
  const server = await serverDeps(options);
  const { config, close: shutdownUpstream } = server;
  const [{ serveHttp }] = await transport;
  const token = config.server.mcpToken ?? randomBytes(24).toString("base64url");
  let access: Access;
  try {
    access = await openAccess(server, token, options.host);
  } catch (error) {
    await shutdownUpstream();
    throw error;
  }
  const http = await serveHttp(await httpSettings(server, access, options));
  const { oauth } = access;
  process.stderr.write(
    banner({
      url: http.url,
      publicUrl: config.server.publicUrl,
      signIn: oauth
        ? { issuer: oauth.access.verifier.issuer, users: oauth.access.users.size }
        : null,
      clientsFile: config.server.clientsFile !== null,
      token: config.server.clientsFile || oauth ? null : token,
      generated: !config.server.mcpToken,
      upstream: config.api.baseUrl,
      sandbox: !!server.sandbox,
      user: config.api.delegatedUser,
      audit: server.auditFile,
    }),
  );
  return async () => {
    // Stop accepting, let in-flight calls finish, then close sessions; journal saves are
    // durable when they return, so nothing is left to flush.
    await http.close(config.server.shutdownGraceSeconds * 1000);
    await shutdownUpstream();
  };
}

/**
 * The HTTP transport's modules, loading while the configuration, the contract and the state
 * directory are read rather than one after the other once they are: on a busy machine each
 * wait for a file gives the CPU away (see the commit for the figure). A failure surfaces where
 * each module is awaited.
 */
function loadTransport() {
  const loading = Promise.all([
    import("./transport/http.js"),
    import("./transport/clients.js"),
    import("./transport/guard.js"),
    import("./transport/rate-limit.js"),
  ]);
  loading.catch(() => {});
  return loading;
}

type ServerParts = Awaited<ReturnType<typeof serverDeps>>;

/** Who may call over HTTP: the clients file, sign-in with the identity provider, or one token. */
interface Access {
  clients: import("./transport/clients.js").ClientRegistry;
  oauth: Awaited<ReturnType<typeof openSignIn>> | null;
}

async function openAccess(
  { config, api, deps, logger }: ServerParts,
  token: string,
  host: string,
): Promise<Access> {
  const { ClientRegistry } = await import("./transport/clients.js");
  const { isLoopback } = await import("./transport/guard.js");
  const oauthSettings = config.server.oauth;
  if (config.server.mcpToken && (config.server.clientsFile || oauthSettings))
    throw new ConfigError(
      config.server.clientsFile
        ? "PORTFOLIO_MCP_TOKEN and PORTFOLIO_MCP_CLIENTS_FILE: set one; the clients file gives each client its own token, so the single token would be ignored"
        : "PORTFOLIO_MCP_TOKEN and PORTFOLIO_OAUTH_ISSUER: with sign-in, tokens for automation go in PORTFOLIO_MCP_CLIENTS_FILE (each with its own delegated user); the single token is for personal use",
    );
  const terms = allowlistTerms(api.routes, {
    readOnly: config.writes.readOnly,
    allowSensitive: deps.allowSensitive ?? new Set(),
  });
  const clients = config.server.clientsFile
    ? ClientRegistry.fromFile(config.server.clientsFile, terms)
    : oauthSettings
      ? ClientRegistry.none()
      : ClientRegistry.single(token, config.api.delegatedUser);
  const oauth = oauthSettings ? await openSignIn(oauthSettings, terms) : null;
  for (const warning of [...clients.warnings, ...(oauth?.access.users.warnings ?? [])])
    logger.warn(warning);
  if (oauthSettings && !config.server.publicUrl && !isLoopback(host))
    logger.warn(
      "PORTFOLIO_OAUTH_ISSUER is set without PORTFOLIO_PUBLIC_URL: the resource URL clients are told (and tokens must be issued for) is the bound address; behind a reverse proxy, set PORTFOLIO_PUBLIC_URL to the address clients use",
    );
  return { clients, oauth };
}

/** The HTTP transport's settings: the configuration's limits, the callers, one server each. */
async function httpSettings(
  { config, api, deps, logger, metrics, redis, fleet }: ServerParts,
  { clients, oauth }: Access,
  options: AppOptions,
) {
  const { RedisRateLimiter } = await import("./transport/rate-limit.js");
  const readiness = new Readiness(api, Date.now, redis, fleet);
  return {
    observer: deps.observer,
    host: options.host,
    port: options.port,
    clients,
    oauth,
    publicUrl: config.server.publicUrl,
    isWriteTool: config.writes.readOnly ? undefined : (name: string) => WRITE_TOOLS.has(name),
    allowedHosts: config.server.allowedHosts,
    allowedOrigins: config.server.allowedOrigins,
    maxBodyBytes: config.server.maxBodyBytes,
    maxSessions: config.server.maxSessions,
    maxSessionsPerClient: config.server.maxSessionsPerClient,
    maxConnectionsPerPeer: config.server.maxConnectionsPerPeer,
    sessionIdleMs: config.server.sessionIdleSeconds * 1000,
    rateLimitPerMinute: config.server.rateLimitPerMinute,
    rateLimiter: redis
      ? new RedisRateLimiter(redis, config.server.rateLimitPerMinute, logger)
      : undefined,
    stateless: options.stateless ?? false,
    createServer: (principal: Principal, sessionId: string | null) =>
      createMcpServer(deps, {
        sessionId,
        delegatedUser: principal.delegatedUser,
        client: `http:${principal.id}`,
        readOnly: principal.readOnly,
        allowedTools: principal.tools,
        email: principal.email ?? null,
      }),
    ready: () => readiness.check(),
    metrics,
    logger,
  };
}

/** Tools that write (drafts and the confirmations): what a token needs portfolio:write for. */
const WRITE_TOOLS: ReadonlySet<string> = new Set(
  INVENTORY.tools.filter((t) => !t.annotations.readOnlyHint).map((t) => t.name),
);

/**
 * Sign-in with the identity provider: its metadata and keys (a startup error, naming
 * PORTFOLIO_OAUTH_ISSUER, when it cannot be reached: an orchestrator restarts the server, and
 * nobody is let in on a half-configured check), then the users file.
 */
async function openSignIn(
  settings: NonNullable<Config["server"]["oauth"]>,
  terms: ReturnType<typeof allowlistTerms>,
) {
  const { TokenVerifier } = await import("./transport/oauth.js");
  const { OAuthUsers } = await import("./transport/oauth-users.js");
  const users = OAuthUsers.fromFile(settings.usersFile, settings.userClaim, terms);
  const { verifier } = await TokenVerifier.discover(settings.issuer);
  return { access: { verifier, users }, audience: settings.audience };
}

/**
 * The write journal, and the delivery of writes a previous run left confirmed but unfinished.
 * The sandbox forgets its data on exit, so its journal is a fresh temporary directory unless a
 * state directory was named explicitly.
 */
async function openWrites(
  config: Config,
  { api, logger, metrics, redis }: Prepared,
  dir: string,
  keys: StateKeys,
  observer: Observer | undefined,
) {
  const mac = new IntentMac(keys.derive("intent-mac"));
  const quarantined = metrics.counter(
    "portfolio_mcp_intents_quarantined",
    "Stored intents that failed their checks (MAC, shape) and were set aside, never delivered: check them by hand.",
    { zeros: [{ store: redis ? "redis" : "file" }] },
  );
  const onQuarantine = (where: "file" | "redis") => quarantined({ store: where });
  // Replicas share the journal on Redis; one process keeps it in its state directory.
  const fleet = redis ? new FleetCheck(redis, keys) : null;
  if (fleet) {
    const problem = await fleet.problem();
    if (problem) logger.error(`not ready: ${problem}`);
  }
  const journal = redis
    ? new RedisJournal(redis, mac, { logger, onQuarantine, fleet: fleet ?? undefined })
    : new FileJournal(dir, { logger, mac, onQuarantine });
  const gate = await WriteGate.open({
    store: journal,
    api,
    logger,
    ttlMs: config.writes.confirmationTtlSeconds * 1000,
    maxPendingPerUser: config.writes.maxPendingDrafts,
    // A replica that dies mid-delivery leaves its lease to run out (15 s); another finishes.
    recoverAbandonedEveryMs: redis ? 5_000 : undefined,
    undeliverable: deliverability(api.routes, {
      allowSensitive: new Set(config.writes.allowSensitive),
    }),
    observer,
  });
  metrics.gauge("portfolio_mcp_intents_pending", "Drafted writes awaiting confirmation.", () =>
    gate.count("pending"),
  );
  metrics.gauge(
    "portfolio_mcp_intents_unfinished",
    "Confirmed writes not finished yet (being sent, or uncertain and to be sent again).",
    () => gate.count("sending") + gate.count("uncertain"),
  );
  gate
    .recover()
    .catch((error: unknown) => logger.error({ err: error }, "could not finish confirmed writes"));
  const sealer = Sealer.from(keys);
  return { gate, mode: config.writes.confirm, sealer, fleet };
}

/**
 * The audit trail, where PORTFOLIO_AUDIT_FILE (or the default: on for serve --http, under the
 * state directory; off over stdio) puts it. Null when off.
 */
function openAudit(
  config: Config,
  transport: AppOptions["transport"],
  dir: string,
  keys: StateKeys,
  { logger, metrics, redactor }: Prepared,
) {
  const setting = config.audit.file;
  const file =
    setting === "off" || (setting === null && transport === "stdio")
      ? null
      : (setting ?? join(dir, "audit", "audit.jsonl"));
  if (file === null) return null;
  const records = metrics.counter(
    "portfolio_mcp_audit_records",
    "Audit records written, by event.",
  );
  const failures = metrics.counter(
    "portfolio_mcp_audit_failures",
    "Audit records that could not be written, by event (a write is then not sent).",
  );
  const trail = AuditTrail.open({
    settings: { ...config.audit, file },
    replica: config.audit.replica,
    key: keys.derive("audit-arguments"),
    logger,
    // Kept whole only with PORTFOLIO_AUDIT_ARGUMENTS=full: secrets and share tokens removed.
    redact: (value) =>
      JSON.parse(redactor.scrub(JSON.stringify(withoutShareTokens(value) ?? null))),
    onRecord: (event, written) => (written ? records : failures)({ event }),
  });
  return { trail, file, sink: auditSink(trail, { logger }) };
}

/** Settings of the other transport are ignored: say so rather than let them pass in silence. */
function transportWarnings(config: Config, transport: AppOptions["transport"]): string[] {
  if (transport === "http") return [];
  const httpOnly = [
    config.server.clientsFile ? "PORTFOLIO_MCP_CLIENTS_FILE" : null,
    config.server.mcpToken ? "PORTFOLIO_MCP_TOKEN" : null,
    config.server.oauth ? "PORTFOLIO_OAUTH_ISSUER" : null,
    config.server.publicUrl ? "PORTFOLIO_PUBLIC_URL" : null,
  ].filter(Boolean);
  return httpOnly.length > 0
    ? [`${httpOnly.join(" and ")} apply to serve --http only; over stdio they are ignored`]
    : [];
}

/**
 * The key's contract: the export the operator configured, or, on the embedded sandbox, the
 * export its administration route hands out for the demo key (the way a real administrator
 * would export it, over loopback).
 */
/** node-redis (about 500 KiB) loads only for a deployment that shares its state. */
async function openRedis(
  config: Config,
  logger: ReturnType<typeof createLogger>,
): Promise<SharedRedis | null> {
  if (!config.redis) return null;
  return (await import("./state/redis.js")).connectRedis(config.redis, logger);
}

async function loadContract(config: Config, sandbox: Sandbox | null): Promise<Contract | null> {
  if (config.api.contractFile) return readContractFile(config.api.contractFile);
  if (!sandbox) return null;
  const url = new URL(
    `/_admin/keys/${encodeURIComponent(config.api.keyId)}/contract.json`,
    sandbox.baseUrl,
  );
  return normaliseContract(await getJson(url), "the embedded sandbox's export");
}

function getJson(url: URL): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        try {
          if (res.statusCode !== 200) throw new Error(`${url} answered HTTP ${res.statusCode}`);
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        } catch (error) {
          reject(error);
        }
      });
    }).on("error", reject);
  });
}

/** Points the configuration at the embedded sandbox, whatever the environment says about the API. */
function withSandbox(sources: ConfigSources, sandbox: Sandbox): ConfigSources {
  const c = sandbox.credentials;
  return {
    ...sources,
    env: {
      ...(sources.env ?? process.env),
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: c.keyId,
      PORTFOLIO_API_SECRET: c.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: c.delegatedUserEmail,
      PORTFOLIO_DELEGATED_USER_ID: "",
      PORTFOLIO_TOKEN_PREFIX: c.tokenPrefix,
      PORTFOLIO_DELEGATION_HEADER_PREFIX: c.delegationHeaderPrefix,
      PORTFOLIO_ROUTES_FILE: "",
    },
    flags: Object.fromEntries(
      Object.entries(sources.flags ?? {}).filter(
        ([name]) => !name.startsWith("PORTFOLIO_API_") && !name.startsWith("PORTFOLIO_DELEGATED"),
      ),
    ),
  };
}
