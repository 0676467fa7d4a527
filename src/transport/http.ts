import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { NodeStreamableHTTPServerTransport, toNodeHandler } from "@modelcontextprotocol/node";
import {
  type AuthInfo,
  classifyInboundRequest,
  createMcpHandler,
  type McpRequestContext,
  type Server,
} from "@modelcontextprotocol/server";
import type { Observer } from "../events.js";
import type { Logger } from "../log.js";
import type { Verdict } from "../readiness.js";
import type { Metrics } from "../telemetry/metrics.js";
import { Authenticator, type OAuthAccess } from "./authenticate.js";
import type { ClientRegistry, Principal } from "./clients.js";
import { ConnectionLimits } from "./connections.js";
import { allowedOrigins, checkHostAndOrigin, isWildcard } from "./guard.js";
import { INVALID_REQUEST, repairResponse } from "./jsonrpc.js";
import { METADATA_PATHS, SCOPE_WRITE } from "./oauth.js";
import { LocalRateLimiter, type RateLimiter } from "./rate-limit.js";
import { json, reply, rpcError } from "./replies.js";
import { Sessions } from "./sessions.js";

export interface HttpOptions {
  /** Told of every refused sign-in (the audit trail, the metrics). */
  observer?: Observer;
  host: string;
  port: number;
  clients: ClientRegistry;
  /**
   * Sign-in with the organisation's identity provider (OAuth 2.1 resource server); absent:
   * the clients file's (or the single) bearer tokens only.
   */
  oauth?: { access: OAuthAccess; audience: string | null } | null;
  /** PORTFOLIO_PUBLIC_URL: how clients reach us (origin); default: the bound address. */
  publicUrl?: string | null;
  /** Whether a tool writes (needs portfolio:write); by default none does. */
  isWriteTool?(name: string): boolean;
  allowedHosts: string[];
  allowedOrigins: string[];
  maxBodyBytes: number;
  maxSessions: number;
  maxSessionsPerClient: number;
  sessionIdleMs: number;
  rateLimitPerMinute: number;
  /** Counts each client's requests; default: in this process (Redis: across replicas). */
  rateLimiter?: RateLimiter;
  /** No session state kept: every request is answered by a fresh server (both eras). */
  stateless: boolean;
  /** Sockets one peer address (an IPv6 /64) may hold open (connections.ts). */
  maxConnectionsPerPeer: number;
  /** Connection hygiene; the defaults suit production, tests shorten them. */
  connections?: { headersTimeoutMs: number; checkEveryMs: number; max: number };
  /** The MCP server for one principal: for a 2025 session (its id), or one request (null). */
  createServer(principal: Principal, sessionId: string | null): Server;
  /** GET /readyz: whether the upstream token exchange works, and if not, why. */
  ready(): Promise<Verdict>;
  metrics: Metrics;
  logger: Logger;
}

export interface RunningHttp {
  url: string;
  port: number;
  sessions(): number;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then closes everything. */
  close(graceMs?: number): Promise<void>;
}

const MCP_PATH = "/mcp";
/** The one revision with JSON-RPC batching (added 2025-03-26, removed 2025-06-18). */
const BATCHING_VERSIONS = new Set(["2025-03-26"]);
/** Protocol version of a request without the header (specification, transports). */
const VERSION_WITHOUT_HEADER = "2025-03-26";
const MAX_BATCH_MESSAGES = 10;
/**
 * A client must send its headers within 10 s (checked every 2 s), or its connection is closed:
 * a slow-header client cannot hold connections open without a token. 2,000 at most, shared out
 * between peers (connections.ts).
 */
const CONNECTIONS = { headersTimeoutMs: 10_000, checkEveryMs: 2_000, max: 2_000 };
const REQUEST_TIMEOUT_MS = 30_000;
/** A keep-alive socket with no request is closed after this long (node's default, made explicit). */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** At most one log line a minute about sockets closed or refused for room; the metric counts all. */
const LIMIT_LOG_EVERY_MS = 60_000;

/**
 * Streamable HTTP on node:http, both protocol eras on one endpoint. Every request: Host and
 * Origin (403), then the bearer (401 with `WWW-Authenticate`; with sign-in on, an OAuth access
 * token or a clients-file token, see authenticate.ts), then the client's rate (429), then the
 * body (and, for a token without portfolio:write, the write tools it calls: 403). 2026-07-28
 * requests (a per-request envelope) are answered by a fresh server each; 2025 requests by their
 * session's server (or, with `stateless`, by a fresh one each too).
 */
export async function serveHttp(options: HttpOptions): Promise<RunningHttp> {
  const limiter = options.rateLimiter ?? new LocalRateLimiter(options.rateLimitPerMinute);
  const sessions = new Sessions({
    maxSessions: options.maxSessions,
    maxSessionsPerClient: options.maxSessionsPerClient,
    idleMs: options.sessionIdleMs,
    createServer: options.createServer,
    logger: options.logger,
  });
  const countRequest = options.metrics.counter(
    "portfolio_mcp_http_requests",
    "HTTP requests answered, by status.",
  );
  const auth = new Authenticator(options.clients, options.oauth?.access ?? null, options.logger);
  const isWriteTool = options.isWriteTool ?? (() => false);
  let inFlight = 0;
  let closing = false;
  options.metrics.gauge("portfolio_mcp_sessions_open", "Open MCP sessions.", () => sessions.size);

  // The principal rides on the request as the SDK's AuthInfo, and back out to our factory.
  const perRequest = ({ authInfo }: McpRequestContext) => {
    const principal = (authInfo?.extra as { principal?: Principal } | undefined)?.principal;
    if (!principal) throw new Error("an MCP request reached the handler unauthenticated");
    return options.createServer(principal, null);
  };
  const onerror = (error: Error) => options.logger.info({ err: error }, "MCP request refused");
  const modern = createMcpHandler(perRequest, { legacy: "reject", onerror });
  const modernNode = toNodeHandler(modern);

  const connections = options.connections ?? CONNECTIONS;
  const limited = options.metrics.counter(
    "portfolio_mcp_connections_limited",
    "Sockets closed (idle) or refused to keep within the per-peer and total caps, by cap and action.",
  );
  let limitLoggedAt = Number.NEGATIVE_INFINITY;
  const sockets = new ConnectionLimits({
    perPeer: options.maxConnectionsPerPeer,
    total: connections.max,
    onLimit: ({ cap, action }) => {
      limited({ cap, action });
      if (performance.now() - limitLoggedAt < LIMIT_LOG_EVERY_MS) return;
      limitLoggedAt = performance.now();
      options.logger.warn(
        { cap, action, open: sockets.open },
        `a socket was ${action === "refused" ? "refused" : "closed while idle"} to stay within ${cap === "peer" ? "PORTFOLIO_MCP_MAX_CONNECTIONS_PER_PEER" : "the total of connections"} (portfolio_mcp_connections_limited_total counts them; this line comes once a minute at most)`,
      );
    },
  });
  options.metrics.gauge(
    "portfolio_mcp_connections_open",
    "Open client sockets.",
    () => sockets.open,
  );
  const httpServer = createServer(
    { connectionsCheckingInterval: connections.checkEveryMs },
    (req, res) => {
      // Calls are POSTs; a GET is a client's standing event stream, which waits for nothing.
      const call = req.method === "POST";
      if (call) inFlight++;
      res.on("close", () => {
        if (call) inFlight--;
        countRequest({ status: String(res.statusCode) });
      });
      handle(req, res).catch((error: unknown) => {
        options.logger.error({ err: error }, "HTTP request failed");
        if (!res.headersSent) reply(res, 500, "Internal error.");
        else res.end();
      });
    },
  );
  // The public URL's host is ours too: a reverse proxy forwards it as it is.
  const allowedHosts = [...options.allowedHosts, ...publicHosts(options.publicUrl ?? null)];
  let allowed = allowedOrigins({
    bindHost: options.host,
    port: options.port,
    allowedHosts,
    allowedOrigins: options.allowedOrigins,
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = checkHostAndOrigin(req, allowed);
    if (refusal) return reply(res, refusal.status, refusal.message);
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/healthz") return json(res, 200, { status: "ok" });
    if (req.method === "GET" && path === "/readyz") {
      const verdict = await options.ready();
      return json(
        res,
        verdict.ready ? 200 : 503,
        verdict.ready ? { status: "ready" } : { status: "not ready", reason: verdict.reason },
      );
    }
    if (req.method === "GET" && path === "/metrics") {
      const text = await options.metrics.render();
      res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" }).end(text);
      return;
    }
    // RFC 9728: how to sign in, for anyone who asks (no token), at both well-known addresses.
    const metadata = req.method === "GET" && METADATA_PATHS.includes(path ?? "") && auth.metadata();
    if (metadata) {
      res
        .writeHead(200, { "Content-Type": "application/json", "Cache-Control": "max-age=300" })
        .end(JSON.stringify(metadata));
      return;
    }
    if (path !== MCP_PATH) return reply(res, 404, `Not found; the MCP endpoint is ${MCP_PATH}.`);
    if (closing) return reply(res, 503, "Shutting down.", { "Retry-After": "5" });

    const outcome = await auth.authenticate(req.headers.authorization);
    if (!outcome.ok) {
      options.observer?.signInRefused?.({
        reason: outcome.reason,
        status: outcome.status,
        principal: null,
      });
      return reply(res, outcome.status, outcome.message, outcome.headers);
    }
    const principal = outcome.principal;
    if (!["GET", "POST", "DELETE"].includes(req.method ?? "")) {
      return reply(res, 405, "Use POST, GET or DELETE on /mcp.", { Allow: "GET, POST, DELETE" });
    }
    const wait = await limiter.take(principal.id, 1);
    if (wait > 0)
      return reply(res, 429, "Too many requests for this client.", {
        "Retry-After": String(Math.ceil(wait / 1000)),
      });

    let body: unknown;
    if (req.method === "POST") {
      const raw = await readBody(req, options.maxBodyBytes);
      if (raw === null) return reply(res, 413, `The body exceeds ${options.maxBodyBytes} bytes.`);
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        return rpcError(res, 400, -32700, "Parse error: the body is not JSON.");
      }
    }

    if (Array.isArray(body)) {
      // Every message of a batch counts against the client's rate, and batches exist only in
      // the one protocol revision that has them.
      const version =
        sessions.find(req)?.protocolVersion ??
        headerValue(req, "mcp-protocol-version") ??
        VERSION_WITHOUT_HEADER;
      if (!BATCHING_VERSIONS.has(version))
        return rpcError(
          res,
          400,
          INVALID_REQUEST,
          `Protocol version ${version} has no JSON-RPC batches: send one message per request.`,
        );
      if (body.length === 0 || body.length > MAX_BATCH_MESSAGES)
        return rpcError(
          res,
          400,
          INVALID_REQUEST,
          `A batch carries 1 to ${MAX_BATCH_MESSAGES} messages; this one has ${body.length}.`,
        );
      const more = await limiter.take(principal.id, body.length - 1);
      if (more > 0)
        return reply(res, 429, "Too many requests for this client.", {
          "Retry-After": String(Math.ceil(more / 1000)),
        });
      body = body.map(repairResponse);
    } else {
      body = repairResponse(body);
    }

    // A token without portfolio:write that calls a write tool: the MCP authorization spec's
    // step-up, 403 insufficient_scope, so the client can sign in again for more. Refused here,
    // before any server sees it, whatever the session was opened with.
    const writing = principal.oauth?.lacksWriteScope && callsTool(body, isWriteTool);
    if (writing) {
      options.observer?.signInRefused?.({
        reason: "scope",
        status: 403,
        principal: `http:${principal.id}`,
      });
      const step = auth.insufficientScope(
        `${writing} writes, and the access token does not grant ${SCOPE_WRITE}; sign in again and allow writing. Nothing was sent.`,
      );
      return reply(res, step.status, step.message, step.headers);
    }

    (req as IncomingMessage & { auth?: AuthInfo }).auth = {
      token: "[held by the transport]",
      clientId: principal.id,
      scopes: [...(principal.oauth?.scopes ?? [])],
      extra: { principal },
    };
    if (!isLegacy(req, body)) return modernNode(req, res, body);
    if (options.stateless) return statelessLegacy(req, res, body, principal);
    return sessions.handle(req, res, body, principal);
  }

  /** A 2025 request without sessions: a fresh server and transport, a JSON answer. */
  async function statelessLegacy(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    principal: Principal,
  ): Promise<void> {
    if (req.method !== "POST")
      return reply(res, 405, "Stateless mode answers POST only.", { Allow: "POST" });
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = options.createServer(principal, null);
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  httpServer.headersTimeout = connections.headersTimeoutMs;
  httpServer.requestTimeout = Math.max(REQUEST_TIMEOUT_MS, connections.headersTimeoutMs);
  httpServer.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  sockets.watch(httpServer);
  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(
              `port ${options.port} on ${options.host} is already in use: choose another with --port N, or stop the process that holds it`,
            )
          : error,
      ),
    );
    httpServer.listen(options.port, options.host, () => resolve());
  });
  const port = (httpServer.address() as AddressInfo).port;
  allowed = allowedOrigins({
    bindHost: options.host,
    port,
    allowedHosts,
    allowedOrigins: options.allowedOrigins,
  });
  // Bound to every address, it is reached on loopback at least: print the address that works.
  const hostForUrl = isWildcard(options.host)
    ? "127.0.0.1"
    : options.host.includes(":")
      ? `[${options.host}]`
      : options.host;
  auth.locate(options.publicUrl ?? `http://${hostForUrl}:${port}`, options.oauth?.audience ?? null);
  return {
    url: `http://${hostForUrl}:${port}${MCP_PATH}`,
    port,
    sessions: () => sessions.size,
    async close(graceMs = 10_000) {
      closing = true;
      const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      httpServer.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await sessions.close();
      await modern.close();
      httpServer.closeAllConnections();
      await stopped;
    },
  };
}

async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  if (Number(req.headers["content-length"] ?? 0) > maxBytes) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** `host` and `host:port` of the public URL, as a proxy may forward either. */
function publicHosts(publicUrl: string | null): string[] {
  if (!publicUrl) return [];
  const url = new URL(publicUrl);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return [url.host, `${url.hostname}:${port}`];
}

/** The name of the first tool a body (one message or a batch) calls that `matches`, if any. */
function callsTool(body: unknown, matches: (name: string) => boolean): string | null {
  for (const message of Array.isArray(body) ? body : [body]) {
    const m = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (m?.method === "tools/call" && typeof m.params?.name === "string" && matches(m.params.name))
      return m.params.name;
  }
  return null;
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * Which era a request belongs to, by the SDK's own classifier (the one `isLegacyRequest` and
 * `createMcpHandler` use), fed the body we already parsed and the three headers it reads,
 * rather than a Web Request built for the purpose on every call.
 */
function isLegacy(req: IncomingMessage, body: unknown): boolean {
  if (req.method !== "POST" || body === undefined) return true;
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  };
  const outcome = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: header("mcp-protocol-version"),
    mcpMethodHeader: header("mcp-method"),
    mcpNameHeader: header("mcp-name"),
    body,
  });
  return outcome.kind === "legacy";
}
