import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Clock } from "./clock.js";
import { buildDemoData, DEMO_USERS } from "./data/demo.js";
import { FaultInjector, type FaultMatch, type FaultRule } from "./faults.js";
import { IdempotencyStore } from "./idempotency.js";
import { DEMO_KEYS, type SandboxKey } from "./keys.js";
import { RateLimiter, type RateLimitSettings } from "./rate-limit.js";
import { RequestLog, type RequestLogEntry } from "./request-log.js";
import { ROUTES } from "./routes.js";
import { Router } from "./routing.js";
import { BASE_PATH, createRequestHandler } from "./server.js";
import { SandboxState } from "./state.js";
import { type ExpiresAtFormat, TokenService } from "./tokens.js";

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
  const seed = options.seed ?? "aurore-demo";
  const tokenPrefix = options.tokenPrefix ?? DEFAULT_TOKEN_PREFIX;
  const delegationHeaderPrefix = options.delegationHeaderPrefix ?? DEFAULT_DELEGATION_HEADER_PREFIX;
  const keyList =
    options.keys ?? Object.values(DEMO_KEYS).map((k) => structuredClone(k) as SandboxKey);
  const keys = new Map(keyList.map((k) => [k.keyId, k]));
  const clock = new Clock();
  const state = new SandboxState(
    buildDemoData({ seed, today: options.today ?? new Date().toISOString().slice(0, 10) }),
  );
  const tokens = new TokenService(keys, clock, {
    prefix: tokenPrefix,
    clockWindowSeconds: options.clockWindowSeconds ?? 300,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 900,
    expiresAtFormat: options.expiresAtFormat ?? "iso",
    environment: "sandbox",
  });
  const faults = new FaultInjector(seed);
  const log = new RequestLog(options.requestLogLimit ?? 10_000);
  const handler = createRequestHandler({
    router: new Router(ROUTES.map((r) => ({ ...r, path: options.routePaths?.[r.id] ?? r.path }))),
    state,
    tokens,
    rateLimiter:
      options.rateLimit === false
        ? null
        : new RateLimiter({ ...DEFAULT_RATE_LIMIT, ...options.rateLimit }, clock),
    idempotency:
      options.idempotencyReplay === false
        ? null
        : new IdempotencyStore(clock, options.idempotencyRetentionSeconds ?? 86_400),
    faults,
    log,
    clock,
    delegationHeaderPrefix,
    maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
    onRequest: options.onRequest,
  });

  const server = createServer({ keepAlive: true }, (req, res) => void handler(req, res));
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const camille = state.data.users.find((u) => u.id === DEMO_USERS.camille);
  const firstKey = keyList[0];
  if (!firstKey || !camille)
    throw new Error("the sandbox needs at least one key and its demo users");

  const control: SandboxControl = {
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

  return {
    baseUrl: `http://${host.includes(":") ? `[${host}]` : host}:${port}${BASE_PATH}`,
    credentials: {
      keyId: firstKey.keyId,
      secret: firstKey.secret,
      tokenPrefix,
      delegationHeaderPrefix,
      delegatedUserEmail: camille.email,
      delegatedUserId: camille.id,
    },
    control,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
