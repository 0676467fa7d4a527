import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { assertRouteAllowed, normaliseAddress } from "./access.js";
import type { Clock } from "./clock.js";
import { resolveDelegatedUser } from "./delegation.js";
import type { FaultDecision, FaultInjector, RouteKind } from "./faults.js";
import {
  bodyForLog,
  flatHeaders,
  multipartHeadersForLog,
  parseJsonBody,
  pickRequestId,
  readBody,
  sendPadded,
  sendResult,
} from "./http-io.js";
import { contentDigest, type IdempotencyStore, requireIdempotencyKey } from "./idempotency.js";
import { parseUpload } from "./multipart.js";
import { invalid, Problem, problemBody } from "./problem.js";
import type { RateLimiter } from "./rate-limit.js";
import type { RequestLog, RequestLogEntry } from "./request-log.js";
import { completeDueErasures } from "./rgpd.js";
import type { RouteDef, RouteResult, Router } from "./routing.js";
import type { SandboxState } from "./state.js";
import { EXCHANGE_OPERATION, type TokenService } from "./tokens.js";
import { parseOrRefuse } from "./validation.js";

export const BASE_PATH = "/v1";
const EXCHANGE_PATH = `${BASE_PATH}${EXCHANGE_OPERATION.path}`;
const NO_PARAMETERS = z.strictObject({});

export interface PipelineDeps {
  router: Router;
  state: SandboxState;
  tokens: TokenService;
  rateLimiter: RateLimiter | null;
  idempotency: IdempotencyStore | null;
  faults: FaultInjector;
  log: RequestLog;
  clock: Clock;
  delegationHeaderPrefix: string;
  maxBodyBytes: number;
  /** Cap on multipart bodies (uploads), unless the route sets its own. */
  maxUploadBytes: number;
  /** The loopback administration routes under /_admin (the per-key export). */
  admin: (request: AdminRequest) => RouteResult;
  onRequest?: (entry: RequestLogEntry) => void;
}

export const ADMIN_PREFIX = "/_admin/";

export interface AdminRequest {
  method: string;
  path: string;
  address: string;
  host: string | undefined;
}

/** What the log learns about a request while the pipeline runs. */
interface Trace {
  routeId: string | null;
  keyId: string | null;
}

/** One request as it goes through the pipeline: what arrived, and what the log will say. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  started: number;
  arrivedAt: string;
  requestId: string;
  method: string;
  path: string;
  search: URLSearchParams;
  address: string;
  trace: Trace;
  raw: Buffer;
  /** The status answered; null while none is, or when the connection was dropped. */
  status: number | null;
}

/**
 * One request, in the order a real gateway would refuse it: route, faults, bearer, rate
 * limit, key restrictions, delegation, Idempotency-Key, validation, replay, then the route.
 */
export function createRequestHandler(deps: PipelineDeps) {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const exchange = arrival(deps, req, res);
    try {
      await serve(deps, exchange);
    } catch (error) {
      answer(deps, exchange, problemResult(error, exchange.requestId, exchange.trace.routeId));
    } finally {
      logExchange(deps, exchange);
    }
  };
}

function arrival(deps: PipelineDeps, req: IncomingMessage, res: ServerResponse): Exchange {
  const rawUrl = req.url ?? "/";
  const queryAt = rawUrl.indexOf("?");
  return {
    req,
    res,
    started: performance.now(),
    arrivedAt: new Date(deps.clock.now()).toISOString(),
    requestId: pickRequestId(req.headers["x-request-id"]),
    method: (req.method ?? "GET").toUpperCase(),
    path: queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt),
    search: new URLSearchParams(queryAt === -1 ? "" : rawUrl.slice(queryAt + 1)),
    address: normaliseAddress(req.socket.remoteAddress),
    trace: { routeId: null, keyId: null },
    raw: Buffer.alloc(0),
    status: null,
  };
}

async function serve(deps: PipelineDeps, exchange: Exchange): Promise<void> {
  const { req, method, path, trace } = exchange;
  if (path.startsWith(ADMIN_PREFIX))
    return answer(
      deps,
      exchange,
      deps.admin({ method, path, address: exchange.address, host: req.headers.host }),
    );
  const target = resolveTarget(deps.router, method, path, trace);
  exchange.raw = await readBody(req, bodyCap(deps, target));
  const fault = deps.faults.decide({ routeId: trace.routeId, kind: target.kind, method });
  if (fault.delayMs > 0) await sleep(fault.delayMs);
  if (fault.terminal?.type === "drop") return drop(exchange);
  const injected = injectedAnswer(fault.terminal, exchange);
  if (injected) return answer(deps, exchange, injected);
  const result =
    target.kind === "exchange"
      ? {
          status: 200,
          json: deps.tokens.exchange(
            parseJsonBody(exchange.raw, req.headers["content-type"]),
            exchange.address,
          ),
        }
      : await runRoute(deps, exchange, target.route, target.params, fault.holdMs);
  if (fault.terminal?.type === "drop_after_apply") return drop(exchange);
  if (fault.terminal?.type === "large_answer") {
    exchange.status = result.status;
    return sendPadded(exchange.res, result, fault.terminal, commonHeaders(deps, exchange));
  }
  answer(deps, exchange, result);
}

/** A fault that answers instead of the route: raw text, a quoted request, or a problem. */
function injectedAnswer(terminal: FaultDecision["terminal"], exchange: Exchange) {
  if (terminal?.type !== "status") return null;
  const { req, method, path } = exchange;
  if (terminal.echoRequest) {
    const echoed = Object.entries(req.headers)
      .map(([name, value]) => `${name}: ${String(value)}`)
      .join("\n");
    const auth = `Authorization: ${req.headers.authorization ?? "(none)"}`;
    return {
      status: terminal.status,
      bytes: Buffer.from(`Gateway error (${auth}) on ${method} ${path}:\n${echoed}\n`),
      contentType: "text/plain",
    };
  }
  if (terminal.body !== undefined)
    return {
      status: terminal.status,
      bytes: Buffer.from(terminal.body),
      contentType: terminal.contentType ?? "text/plain",
    };
  const { status, retryAfterSeconds } = terminal;
  throw new Problem(status, `Injected fault: ${status}.`, {
    reasonCode: status === 429 ? "rate_limit_exceeded" : "injected_fault",
    ...(retryAfterSeconds !== undefined
      ? { headers: { "Retry-After": String(retryAfterSeconds) } }
      : {}),
  });
}

// Date comes from the sandbox's clock, so a skewed server shows its skew like a real one.
const commonHeaders = (deps: PipelineDeps, exchange: Exchange) => ({
  "X-Request-ID": exchange.requestId,
  Date: new Date(deps.clock.now()).toUTCString(),
});

function answer(deps: PipelineDeps, exchange: Exchange, result: RouteResult): void {
  exchange.status = result.status;
  sendResult(exchange.res, result, commonHeaders(deps, exchange));
}

function drop(exchange: Exchange): void {
  exchange.status = null;
  exchange.req.socket.destroy();
}

function logExchange(deps: PipelineDeps, exchange: Exchange): void {
  const { req, raw, trace } = exchange;
  const entry = deps.log.add({
    at: exchange.arrivedAt,
    method: exchange.method,
    path: exchange.path,
    query: queryRecord(exchange.search),
    routeId: trace.routeId,
    headers: flatHeaders(req),
    body: bodyForLog(raw, req.headers["content-type"]),
    parts: multipartHeadersForLog(raw, req.headers["content-type"]),
    remoteAddress: exchange.address,
    keyId: trace.keyId,
    status: exchange.status,
    durationMs: Math.round((performance.now() - exchange.started) * 100) / 100,
  });
  deps.onRequest?.(entry);
}

type Target =
  | { kind: "exchange" }
  | { kind: Exclude<RouteKind, "exchange">; route: RouteDef; params: Record<string, string> };

/** Uploads have their own cap; every other body the sandbox's (413 over it). */
function bodyCap(deps: PipelineDeps, target: Target): number {
  if (target.kind === "exchange" || !target.route.upload) return deps.maxBodyBytes;
  return target.route.upload.maxBytes ?? deps.maxUploadBytes;
}

function resolveTarget(router: Router, method: string, path: string, trace: Trace): Target {
  if (path === EXCHANGE_PATH) {
    trace.routeId = EXCHANGE_OPERATION.id;
    if (method !== "POST") throw methodNotAllowed(["POST"]);
    return { kind: "exchange" };
  }
  if (!path.startsWith(`${BASE_PATH}/`)) throw routeNotFound(path);
  const { match, allowed } = router.match(method, path.slice(BASE_PATH.length));
  if (!match) throw allowed.length > 0 ? methodNotAllowed(allowed) : routeNotFound(path);
  trace.routeId = match.route.id;
  return { kind: match.route.kind, route: match.route, params: match.params };
}

/** A route's request, refused or run: who calls, for whom, with what, then once per key. */
async function runRoute(
  deps: PipelineDeps,
  exchange: Exchange,
  route: RouteDef,
  rawParams: Record<string, string>,
  holdMs: number,
): Promise<RouteResult> {
  const { key, user } = authorise(deps, exchange, route);
  const idempotencyKey =
    route.kind === "write" ? requireIdempotencyKey(exchange.req.headers["idempotency-key"]) : null;
  const input = await parseInput(route, rawParams, exchange);
  const invoke = async (): Promise<RouteResult> => {
    if (holdMs > 0) await sleep(holdMs);
    try {
      return await route.handle({
        ...input,
        state: deps.state,
        key,
        user,
        now: () => deps.clock.now(),
      });
    } catch (error) {
      return problemResult(error, exchange.requestId, route.id);
    }
  };
  if (idempotencyKey === null || deps.idempotency === null) return invoke();
  const digest = contentDigest({
    route: route.id,
    ...input,
    // An upload is the same write when its bytes are the same.
    file: input.file && {
      ...input.file,
      bytes: contentDigest(input.file.bytes.toString("base64")),
    },
    user: user?.id ?? null,
  });
  return once(deps.idempotency, key.keyId, idempotencyKey, digest, invoke);
}

/** Bearer, rate limit, the key's restrictions, then the delegated user the route acts for. */
function authorise(deps: PipelineDeps, exchange: Exchange, route: RouteDef) {
  const { req, address, trace } = exchange;
  const key = deps.tokens.authenticate(req.headers.authorization);
  trace.keyId = key.keyId;
  deps.rateLimiter?.take(key.keyId);
  assertRouteAllowed(key, route, address);
  // An erasure that fell due ends the user's delegated access before anything is served.
  if (route.capability) completeDueErasures(deps.state, deps.clock.now());
  const user = route.capability
    ? resolveDelegatedUser(
        req.headers,
        deps.delegationHeaderPrefix,
        key,
        { id: route.id, capability: route.capability, kind: route.kind },
        deps.state.data.users,
      )
    : null;
  return { key, user };
}

/** Path, query and body (JSON, or a multipart upload's fields and file), each validated. */
async function parseInput(route: RouteDef, rawParams: Record<string, string>, exchange: Exchange) {
  const { raw, req } = exchange;
  const params = parseOrRefuse(route.params ?? NO_PARAMETERS, rawParams);
  const query = parseOrRefuse(route.query ?? NO_PARAMETERS, singleValuedQuery(exchange.search));
  const upload = route.upload
    ? await parseUpload(raw, req.headers["content-type"], route.upload.file)
    : null;
  const body = upload
    ? parseOrRefuse(route.body ?? NO_PARAMETERS, upload.fields)
    : route.body
      ? parseOrRefuse(route.body, parseJsonBody(raw, req.headers["content-type"]))
      : undefined;
  return { params, query, body, file: upload?.file ?? null };
}

/** A write runs once per Idempotency-Key; a repeat gets the stored answer, marked replayed. */
async function once(
  store: IdempotencyStore,
  keyId: string,
  idempotencyKey: string,
  digest: string,
  invoke: () => Promise<RouteResult>,
): Promise<RouteResult> {
  const stored = store.begin(keyId, idempotencyKey, digest);
  if (stored)
    return {
      status: stored.status,
      json: stored.body,
      contentType: stored.contentType,
      headers: { "Idempotent-Replayed": "true" },
    };
  const result = await invoke();
  store.complete(keyId, idempotencyKey, {
    status: result.status,
    body: result.json,
    contentType: result.contentType,
  });
  return { ...result, headers: { ...result.headers, "Idempotent-Replayed": "false" } };
}

function problemResult(error: unknown, requestId: string, routeId: string | null): RouteResult {
  const problem =
    error instanceof Problem
      ? error
      : new Problem(500, "Unexpected server error.", { reasonCode: "internal_error" });
  if (!(error instanceof Problem))
    process.stderr.write(`sandbox: unexpected error: ${(error as Error)?.stack ?? error}\n`);
  return {
    status: problem.status,
    json: problemBody(problem, requestId, routeId ?? undefined),
    contentType: "application/problem+json",
    headers: problem.extras.headers,
  };
}

function routeNotFound(path: string): Problem {
  return new Problem(404, `No route ${path}.`, { reasonCode: "route_not_found" });
}

function methodNotAllowed(allowed: string[]): Problem {
  return new Problem(405, `Use ${allowed.join(" or ")} on this path.`, {
    reasonCode: "method_not_allowed",
    headers: { Allow: allowed.join(", ") },
  });
}

function queryRecord(search: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of new Set(search.keys())) {
    const values = search.getAll(name);
    out[name] = values.length === 1 ? (values[0] ?? "") : values;
  }
  return out;
}

/** Query parameters as single strings; a repeated parameter is refused rather than guessed. */
function singleValuedQuery(search: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(queryRecord(search))) {
    if (Array.isArray(value))
      throw invalid([{ field: name, rule: "single value", message: "must be given once" }]);
    out[name] = value;
  }
  return out;
}
