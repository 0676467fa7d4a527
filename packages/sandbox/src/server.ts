import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { assertRouteAllowed, normaliseAddress } from "./access.js";
import type { Clock } from "./clock.js";
import { resolveDelegatedUser } from "./delegation.js";
import type { FaultInjector, RouteKind } from "./faults.js";
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

/**
 * One request, in the order a real gateway would refuse it: route, faults, bearer, rate
 * limit, key restrictions, delegation, Idempotency-Key, validation, replay, then the route.
 */
export function createRequestHandler(deps: PipelineDeps) {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const arrivedAt = new Date(deps.clock.now()).toISOString();
    const requestId = pickRequestId(req.headers["x-request-id"]);
    const method = (req.method ?? "GET").toUpperCase();
    const rawUrl = req.url ?? "/";
    const queryAt = rawUrl.indexOf("?");
    const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    const search = new URLSearchParams(queryAt === -1 ? "" : rawUrl.slice(queryAt + 1));
    const address = normaliseAddress(req.socket.remoteAddress);
    const trace: Trace = { routeId: null, keyId: null };
    let raw: Buffer = Buffer.alloc(0);
    let status: number | null = null;

    const finish = () => {
      const entry = deps.log.add({
        at: arrivedAt,
        method,
        path,
        query: queryRecord(search),
        routeId: trace.routeId,
        headers: flatHeaders(req),
        body: bodyForLog(raw, req.headers["content-type"]),
        parts: multipartHeadersForLog(raw, req.headers["content-type"]),
        remoteAddress: address,
        keyId: trace.keyId,
        status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
      });
      deps.onRequest?.(entry);
    };
    const answer = (result: RouteResult) => {
      status = result.status;
      // Date comes from the sandbox's clock, so a skewed server shows its skew like a real one.
      sendResult(res, result, {
        "X-Request-ID": requestId,
        Date: new Date(deps.clock.now()).toUTCString(),
      });
    };
    const drop = () => {
      status = null;
      req.socket.destroy();
    };

    try {
      if (path.startsWith(ADMIN_PREFIX))
        return answer(deps.admin({ method, path, address, host: req.headers.host }));
      const target = resolveTarget(deps.router, method, path, trace);
      raw = await readBody(req, bodyCap(deps, target));
      const fault = deps.faults.decide({ routeId: trace.routeId, kind: target.kind, method });
      if (fault.delayMs > 0) await sleep(fault.delayMs);
      if (fault.terminal?.type === "drop") return drop();
      if (fault.terminal?.type === "status" && fault.terminal.echoRequest) {
        const echoed = Object.entries(req.headers)
          .map(([name, value]) => `${name}: ${String(value)}`)
          .join("\n");
        const auth = `Authorization: ${req.headers.authorization ?? "(none)"}`;
        return answer({
          status: fault.terminal.status,
          bytes: Buffer.from(`Gateway error (${auth}) on ${method} ${path}:\n${echoed}\n`),
          contentType: "text/plain",
        });
      }
      if (fault.terminal?.type === "status" && fault.terminal.body !== undefined) {
        const { status: injected, body, contentType } = fault.terminal;
        return answer({
          status: injected,
          bytes: Buffer.from(body),
          contentType: contentType ?? "text/plain",
        });
      }
      if (fault.terminal?.type === "status") {
        const { status: injected, retryAfterSeconds } = fault.terminal;
        throw new Problem(injected, `Injected fault: ${injected}.`, {
          reasonCode: injected === 429 ? "rate_limit_exceeded" : "injected_fault",
          ...(retryAfterSeconds !== undefined
            ? { headers: { "Retry-After": String(retryAfterSeconds) } }
            : {}),
        });
      }
      const result =
        target.kind === "exchange"
          ? {
              status: 200,
              json: deps.tokens.exchange(parseJsonBody(raw, req.headers["content-type"]), address),
            }
          : await runRoute(
              deps,
              target.route,
              target.params,
              search,
              raw,
              req,
              address,
              requestId,
              trace,
              fault.holdMs,
            );
      if (fault.terminal?.type === "drop_after_apply") return drop();
      if (fault.terminal?.type === "large_answer") {
        status = result.status;
        return await sendPadded(res, result, fault.terminal, {
          "X-Request-ID": requestId,
          Date: new Date(deps.clock.now()).toUTCString(),
        });
      }
      answer(result);
    } catch (error) {
      answer(problemResult(error, requestId, trace.routeId));
    } finally {
      finish();
    }
  };
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

async function runRoute(
  deps: PipelineDeps,
  route: RouteDef,
  rawParams: Record<string, string>,
  search: URLSearchParams,
  raw: Buffer,
  req: IncomingMessage,
  address: string,
  requestId: string,
  trace: Trace,
  holdMs: number,
): Promise<RouteResult> {
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
  const idempotencyKey =
    route.kind === "write" ? requireIdempotencyKey(req.headers["idempotency-key"]) : null;
  const params = parseOrRefuse(route.params ?? NO_PARAMETERS, rawParams);
  const query = parseOrRefuse(route.query ?? NO_PARAMETERS, singleValuedQuery(search));
  const upload = route.upload
    ? await parseUpload(raw, req.headers["content-type"], route.upload.file)
    : null;
  const body = upload
    ? parseOrRefuse(route.body ?? NO_PARAMETERS, upload.fields)
    : route.body
      ? parseOrRefuse(route.body, parseJsonBody(raw, req.headers["content-type"]))
      : undefined;
  const file = upload?.file ?? null;

  const invoke = async (): Promise<RouteResult> => {
    if (holdMs > 0) await sleep(holdMs);
    try {
      return await route.handle({
        params,
        query,
        body,
        file,
        state: deps.state,
        key,
        user,
        now: () => deps.clock.now(),
      });
    } catch (error) {
      return problemResult(error, requestId, route.id);
    }
  };
  if (idempotencyKey === null || deps.idempotency === null) return invoke();

  const digest = contentDigest({
    route: route.id,
    params,
    query,
    body,
    // An upload is the same write when its bytes are the same.
    file: file && { ...file, bytes: contentDigest(file.bytes.toString("base64")) },
    user: user?.id ?? null,
  });
  const stored = deps.idempotency.begin(key.keyId, idempotencyKey, digest);
  if (stored)
    return {
      status: stored.status,
      json: stored.body,
      contentType: stored.contentType,
      headers: { "Idempotent-Replayed": "true" },
    };
  const result = await invoke();
  deps.idempotency.complete(key.keyId, idempotencyKey, {
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
