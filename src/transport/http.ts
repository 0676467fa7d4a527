import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import {
  createMcpHandler,
  type McpRequestContext,
  type Server as McpServer,
} from "@modelcontextprotocol/server";
import type { Observer } from "../events.js";
import type { Logger } from "../log.js";
import type { Verdict } from "../readiness.js";
import type { Metrics } from "../telemetry/metrics.js";
import { Authenticator, type OAuthAccess } from "./authenticate.js";
import type { ClientRegistry, Principal } from "./clients.js";
import { ConnectionLimits } from "./connections.js";
import { allowedOrigins, isWildcard } from "./guard.js";
import { handle, type Pipeline } from "./pipeline.js";
import { LocalRateLimiter, type RateLimiter } from "./rate-limit.js";
import { reply } from "./replies.js";
import { Sessions } from "./sessions.js";
import { MCP_PATH } from "./steps.js";

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
  createServer(principal: Principal, sessionId: string | null): McpServer;
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
 * Streamable HTTP on node:http, both protocol eras on one endpoint. Every request goes through
 * the steps of pipeline.ts: Host and Origin (403), then the bearer (401 with
 * `WWW-Authenticate`; with sign-in on, an OAuth access token or a clients-file token, see
 * authenticate.ts), then the client's rate (429), then the body (and, for a token without
 * portfolio:write, the write tools it calls: 403). 2026-07-28 requests (a per-request envelope)
 * are answered by a fresh server each; 2025 requests by their session's server (or, with
 * `stateless`, by a fresh one each too).
 */
export async function serveHttp(options: HttpOptions): Promise<RunningHttp> {
  const countRequest = options.metrics.counter(
    "portfolio_mcp_http_requests",
    "HTTP requests answered, by status.",
  );
  const { pipeline, closeModern } = pipelineFor(options);
  const connections = options.connections ?? CONNECTIONS;
  const sockets = connectionLimits(options, connections.max);
  const calls = { inFlight: 0 };
  const httpServer = createServer(
    { connectionsCheckingInterval: connections.checkEveryMs },
    (req, res) => {
      // Calls are POSTs; a GET is a client's standing event stream, which waits for nothing.
      const call = req.method === "POST";
      if (call) calls.inFlight++;
      res.on("close", () => {
        if (call) calls.inFlight--;
        countRequest({ status: String(res.statusCode) });
      });
      handle(req, res, pipeline).catch((error: unknown) => failed(res, error, options.logger));
    },
  );
  httpServer.headersTimeout = connections.headersTimeoutMs;
  httpServer.requestTimeout = Math.max(REQUEST_TIMEOUT_MS, connections.headersTimeoutMs);
  httpServer.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  sockets.watch(httpServer);
  await listen(httpServer, options);
  const port = (httpServer.address() as AddressInfo).port;
  pipeline.allowed = allowedFor(options, port);
  // Bound to every address, it is reached on loopback at least: print the address that works.
  const base = `http://${hostForUrl(options.host)}:${port}`;
  pipeline.auth.locate(options.publicUrl ?? base, options.oauth?.audience ?? null);
  return {
    url: `${base}${MCP_PATH}`,
    port,
    sessions: () => pipeline.sessions.size,
    async close(graceMs = 10_000) {
      pipeline.closing = true;
      const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      httpServer.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (calls.inFlight > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      await pipeline.sessions.close();
      await closeModern();
      httpServer.closeAllConnections();
      await stopped;
    },
  };
}

/** What every request's steps work with: made once, before the server listens. */
function pipelineFor(options: HttpOptions): { pipeline: Pipeline; closeModern(): Promise<void> } {
  const sessions = new Sessions({
    maxSessions: options.maxSessions,
    maxSessionsPerClient: options.maxSessionsPerClient,
    idleMs: options.sessionIdleMs,
    createServer: options.createServer,
    logger: options.logger,
  });
  options.metrics.gauge("portfolio_mcp_sessions_open", "Open MCP sessions.", () => sessions.size);
  // The principal rides on the request as the SDK's AuthInfo, and back out to our factory.
  const perRequest = ({ authInfo }: McpRequestContext) => {
    const principal = (authInfo?.extra as { principal?: Principal } | undefined)?.principal;
    if (!principal) throw new Error("an MCP request reached the handler unauthenticated");
    return options.createServer(principal, null);
  };
  const onerror = (error: Error) => options.logger.info({ err: error }, "MCP request refused");
  const modern = createMcpHandler(perRequest, { legacy: "reject", onerror });
  const pipeline: Pipeline = {
    allowed: allowedFor(options, options.port),
    closing: false,
    auth: new Authenticator(options.clients, options.oauth?.access ?? null, options.logger),
    limiter: options.rateLimiter ?? new LocalRateLimiter(options.rateLimitPerMinute),
    sessions,
    observer: options.observer,
    isWriteTool: options.isWriteTool ?? (() => false),
    maxBodyBytes: options.maxBodyBytes,
    ready: options.ready,
    metrics: options.metrics,
    stateless: options.stateless,
    modern: toNodeHandler(modern),
    createServer: options.createServer,
  };
  return { pipeline, closeModern: () => modern.close() };
}

/** Sockets per peer and in all, counted in the metrics and logged once a minute at most. */
function connectionLimits(options: HttpOptions, total: number): ConnectionLimits {
  const limited = options.metrics.counter(
    "portfolio_mcp_connections_limited",
    "Sockets closed (idle) or refused to keep within the per-peer and total caps, by cap and action.",
  );
  let limitLoggedAt = Number.NEGATIVE_INFINITY;
  const sockets = new ConnectionLimits({
    perPeer: options.maxConnectionsPerPeer,
    total,
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
  return sockets;
}

/** A request that failed past its steps: 500 if nothing was answered yet. */
function failed(res: ServerResponse, error: unknown, logger: Logger): void {
  logger.error({ err: error }, "HTTP request failed");
  if (!res.headersSent) reply(res, 500, "Internal error.");
  else res.end();
}

function listen(httpServer: Server, options: HttpOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
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
}

/** The Host and Origin values this server answers to, on this port. */
function allowedFor(options: HttpOptions, port: number) {
  // The public URL's host is ours too: a reverse proxy forwards it as it is.
  return allowedOrigins({
    bindHost: options.host,
    port,
    allowedHosts: [...options.allowedHosts, ...publicHosts(options.publicUrl ?? null)],
    allowedOrigins: options.allowedOrigins,
  });
}

/** The bound address as a URL's host: loopback for every address, IPv6 in brackets. */
function hostForUrl(host: string): string {
  return isWildcard(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
}

/** `host` and `host:port` of the public URL, as a proxy may forward either. */
function publicHosts(publicUrl: string | null): string[] {
  if (!publicUrl) return [];
  const url = new URL(publicUrl);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return [url.host, `${url.hostname}:${port}`];
}
