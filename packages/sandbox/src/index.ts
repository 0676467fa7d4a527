import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdmin } from "./admin.js";
import { Clock } from "./clock.js";
import { buildContract, type OpenApiDocument } from "./contract/openapi.js";
import { buildDemoData, DEMO_USERS } from "./data/demo.js";
import { buildSandboxData } from "./data/index.js";
import { FaultInjector, type FaultMatch, type FaultRule } from "./faults.js";
import { IdempotencyStore } from "./idempotency.js";
import { DEMO_KEYS, type SandboxKey } from "./keys.js";
import { RateLimiter, type RateLimitSettings } from "./rate-limit.js";
import { RequestLog, type RequestLogEntry } from "./request-log.js";
import { ROUTES } from "./routes.js";
import { type RouteDef, Router } from "./routing.js";
import { BASE_PATH, createRequestHandler } from "./server.js";
import { SandboxState } from "./state.js";
import { EXCHANGE_OPERATION, type ExpiresAtFormat, TokenService } from "./tokens.js";

export type { OpenApiDocument } from "./contract/openapi.js";
export { DEMO_USERS } from "./data/demo.js";
export type { FaultAction, FaultMatch, FaultRule } from "./faults.js";
export { DEMO_KEYS, type SandboxKey } from "./keys.js";
export type { RequestLogEntry } from "./request-log.js";
export { ROUTES } from "./routes.js";

export const DEFAULT_TOKEN_PREFIX = "SERVICE-EXTERNAL-API-TOKEN-V1";
export const DEFAULT_DELEGATION_HEADER_PREFIX = "X-Service-Delegated-User";

export interface SandboxOptions {
  port?: number;
  host?: string;
  /** Seed of the demo data (default `aurore-demo`). */
  seed?: string;
  /** Business date the demo data is centred on, YYYY-MM-DD (default: today, UTC). */
  today?: string;
  keys?: SandboxKey[];
  /** The route table (default: the sandbox's own); tests of the pipeline serve their own. */
  routes?: readonly RouteDef[];
  /** Moves routes (by id) to other paths, as a real deployment may differ from these choices. */
  routePaths?: Record<string, string>;
  tokenPrefix?: string;
  delegationHeaderPrefix?: string;
  clockWindowSeconds?: number;
  tokenTtlSeconds?: number;
  /** How `expires_at` is written: the spec leaves its format open. */
  expiresAtFormat?: ExpiresAtFormat;
  /** Per-key limits; `false` turns rate limiting off. */
  rateLimit?: Partial<RateLimitSettings> | false;
  /** When false, Idempotency-Key is still required but nothing is replayed (spec part 4). */
  idempotencyReplay?: boolean;
  idempotencyRetentionSeconds?: number;
  maxBodyBytes?: number;
  /** Cap on multipart uploads, in bytes (default 10 MiB; 413 over it). */
  maxUploadBytes?: number;
  requestLogLimit?: number;
  onRequest?: (entry: RequestLogEntry) => void;
}

export interface SandboxCredentials {
  keyId: string;
  secret: string;
  tokenPrefix: string;
  delegationHeaderPrefix: string;
  delegatedUserEmail: string;
  delegatedUserId: string;
}

/** Test-only handles on a running sandbox; none of this is reachable over HTTP. */
export interface SandboxControl {
  readonly state: SandboxState;
  requests(filter?: { routeId?: string; method?: string; since?: number }): RequestLogEntry[];
  /** The newest log sequence number: `requests({ since: mark })` shows what came after. */
  mark(): number;
  clearRequests(): void;
  addFault(rule: FaultRule): number;
  removeFault(id: number): void;
  /** Requests a fault rule will still hit: 0 once a `count` rule has hit them all. */
  faultRemaining(id: number): number;
  clearFaults(): void;
  failNext(
    count: number,
    status: number,
    options?: { retryAfterSeconds?: number; match?: FaultMatch },
  ): number;
  rateLimitNext(count: number, retryAfterSeconds: number, match?: FaultMatch): number;
  delay(ms: number, options?: { count?: number; match?: FaultMatch }): number;
  /** A slow write: held after its Idempotency-Key is recorded, before it applies. */
  hold(ms: number, options?: { count?: number; match?: FaultMatch }): number;
  dropNext(count: number, match?: FaultMatch): number;
  dropAfterApply(count: number, match?: FaultMatch): number;
  /** Answers grown to `bytes` (after the route ran), streamed; chunked when `declareLength` is false. */
  largeAnswer(
    bytes: number,
    options?: { count?: number; match?: FaultMatch; declareLength?: boolean },
  ): number;
  expireAllBearers(): number;
  skewClock(seconds: number): void;
  updateKey(keyId: string, patch: Partial<Omit<SandboxKey, "keyId">>): void;
  stats(): { tokenExchanges: number; billableResolutions: number; requests: number };
}

export interface Sandbox {
  baseUrl: string;
  credentials: SandboxCredentials;
  control: SandboxControl;
  close(): Promise<void>;
}

const DEFAULT_RATE_LIMIT: RateLimitSettings = {
  burst: 300,
  perSecond: 100,
  banAfterStrikes: 20,
  banSeconds: 30,
};

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const parts = sandboxParts(options);
  const credentials = credentialsOf(parts); // before listening: a refusal leaves no server open
  const host = options.host ?? "127.0.0.1";
  let baseUrl = "";
  const handler = requestHandler(parts, options, () => baseUrl);
  const server = createServer({ keepAlive: true }, (req, res) => void handler(req, res));
  await listen(server, options.port ?? 0, host);
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}${BASE_PATH}`;
  return {
    baseUrl,
    credentials,
    control: controlOf(parts),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What one sandbox is made of: its keys, clock, data, token service, faults and request log. */
interface SandboxParts {
  keyList: SandboxKey[];
  keys: Map<string, SandboxKey>;
  clock: Clock;
  state: SandboxState;
  tokens: TokenService;
  faults: FaultInjector;
  log: RequestLog;
  routes: RouteDef[];
  tokenPrefix: string;
  delegationHeaderPrefix: string;
}

function sandboxParts(options: SandboxOptions): SandboxParts {
  const seed = options.seed ?? "aurore-demo";
  const keyList =
    options.keys ?? Object.values(DEMO_KEYS).map((k) => structuredClone(k) as SandboxKey);
  const keys = new Map(keyList.map((k) => [k.keyId, k]));
  const clock = new Clock();
  // The data keep to the sandbox's clock: nothing done is seeded after the moment it starts.
  const now = clock.now();
  const today = options.today ?? new Date(now).toISOString().slice(0, 10);
  const tokenPrefix = options.tokenPrefix ?? DEFAULT_TOKEN_PREFIX;
  return {
    keyList,
    keys,
    clock,
    state: new SandboxState(buildSandboxData({ seed, today, now })),
    tokens: new TokenService(keys, clock, {
      prefix: tokenPrefix,
      clockWindowSeconds: options.clockWindowSeconds ?? 300,
      tokenTtlSeconds: options.tokenTtlSeconds ?? 900,
      expiresAtFormat: options.expiresAtFormat ?? "iso",
      environment: "sandbox",
    }),
    faults: new FaultInjector(seed),
    log: new RequestLog(options.requestLogLimit ?? 10_000),
    routes: (options.routes ?? ROUTES).map((r) => ({
      ...r,
      path: options.routePaths?.[r.id] ?? r.path,
    })),
    tokenPrefix,
    delegationHeaderPrefix: options.delegationHeaderPrefix ?? DEFAULT_DELEGATION_HEADER_PREFIX,
  };
}

/** The HTTP pipeline over the parts; `baseUrl` is known once the server listens. */
function requestHandler(parts: SandboxParts, options: SandboxOptions, baseUrl: () => string) {
  const { state, clock, delegationHeaderPrefix } = parts;
  return createRequestHandler({
    router: new Router(parts.routes),
    state,
    tokens: parts.tokens,
    rateLimiter:
      options.rateLimit === false
        ? null
        : new RateLimiter({ ...DEFAULT_RATE_LIMIT, ...options.rateLimit }, clock),
    idempotency:
      options.idempotencyReplay === false
        ? null
        : new IdempotencyStore(clock, options.idempotencyRetentionSeconds ?? 86_400),
    faults: parts.faults,
    log: parts.log,
    clock,
    delegationHeaderPrefix,
    maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
    maxUploadBytes: options.maxUploadBytes ?? 10 * 1_048_576,
    admin: createAdmin({
      keys: parts.keys,
      operations: [EXCHANGE_OPERATION, ...parts.routes],
      contractOptions: (requestHost) => ({
        serverUrl: requestHost ? `http://${requestHost}${BASE_PATH}` : baseUrl(),
        entityId: state.data.entity.id,
        environment: "sandbox",
        delegationHeaderPrefix,
        exportedAt: new Date(clock.now()).toISOString(),
      }),
    }),
    onRequest: options.onRequest,
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
}

/** The first key's credentials, acting for Camille Martin: what a demo client is given. */
function credentialsOf(parts: SandboxParts): SandboxCredentials {
  const camille = parts.state.data.users.find((u) => u.id === DEMO_USERS.camille);
  const firstKey = parts.keyList[0];
  if (!firstKey || !camille)
    throw new Error("the sandbox needs at least one key and its demo users");
  return {
    keyId: firstKey.keyId,
    secret: firstKey.secret,
    tokenPrefix: parts.tokenPrefix,
    delegationHeaderPrefix: parts.delegationHeaderPrefix,
    delegatedUserEmail: camille.email,
    delegatedUserId: camille.id,
  };
}

/** What tests and benchmarks steer: the request log, faults, the clock, keys, counters. */
function controlOf({ state, log, faults, tokens, clock, keys }: SandboxParts): SandboxControl {
  return {
    state,
    requests: (filter) => log.list(filter),
    mark: () => log.mark(),
    clearRequests: () => log.clear(),
    addFault: (rule) => faults.add(rule),
    removeFault: (id) => faults.remove(id),
    faultRemaining: (id) => faults.remaining(id),
    clearFaults: () => faults.clear(),
    failNext: (count, status, opts = {}) =>
      faults.add({
        count,
        match: opts.match,
        action: { type: "status", status, retryAfterSeconds: opts.retryAfterSeconds },
      }),
    rateLimitNext: (count, retryAfterSeconds, match) =>
      faults.add({ count, match, action: { type: "status", status: 429, retryAfterSeconds } }),
    delay: (ms, opts = {}) =>
      faults.add({ count: opts.count, match: opts.match, action: { type: "delay", ms } }),
    hold: (ms, opts = {}) =>
      faults.add({ count: opts.count, match: opts.match, action: { type: "hold", ms } }),
    dropNext: (count, match) => faults.add({ count, match, action: { type: "drop" } }),
    dropAfterApply: (count, match = { kind: "write" }) =>
      faults.add({ count, match, action: { type: "drop_after_apply" } }),
    largeAnswer: (bytes, opts = {}) =>
      faults.add({
        count: opts.count,
        match: opts.match,
        action: { type: "large_answer", bytes, declareLength: opts.declareLength },
      }),
    expireAllBearers: () => tokens.expireAll(),
    skewClock: (seconds) => clock.skew(seconds),
    updateKey(keyId, patch) {
      const key = keys.get(keyId);
      if (!key) throw new Error(`no sandbox key ${keyId}`);
      Object.assign(key, patch);
    },
    stats: () => ({
      tokenExchanges: tokens.exchanges,
      billableResolutions: state.billableResolutions,
      requests: log.mark(),
    }),
  };
}

export interface DemoContractOptions {
  seed?: string;
  /** Default: the address `portfolio-mcp sandbox` listens on. */
  serverUrl?: string;
  exportedAt?: string;
  delegationHeaderPrefix?: string;
}

/**
 * The export of one demo key, without starting a server (`portfolio-mcp sandbox contract`):
 * the same document `GET /_admin/keys/{key_id}/contract.json` serves. Null for an unknown key.
 */
export function demoContract(
  keyId: string,
  options: DemoContractOptions = {},
): OpenApiDocument | null {
  const key = Object.values(DEMO_KEYS).find((k) => k.keyId === keyId);
  if (!key) return null;
  const seed = options.seed ?? "aurore-demo";
  // The entity's id is the seed's first draw: any business date gives the same.
  const { entity } = buildDemoData({ seed, today: "2026-01-01" });
  return buildContract([EXCHANGE_OPERATION, ...ROUTES], key, {
    serverUrl: options.serverUrl ?? `http://127.0.0.1:4010${BASE_PATH}`,
    entityId: entity.id,
    environment: "sandbox",
    delegationHeaderPrefix: options.delegationHeaderPrefix ?? DEFAULT_DELEGATION_HEADER_PREFIX,
    exportedAt: options.exportedAt ?? new Date().toISOString(),
  });
}
