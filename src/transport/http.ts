import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  isInitializeRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import type { Verdict } from "../readiness.js";
import type { ClientRegistry, Principal } from "./clients.js";
import { allowedOrigins, checkHostAndOrigin } from "./guard.js";
import { INVALID_REQUEST, repairResponse } from "./jsonrpc.js";

export interface HttpOptions {
  host: string;
  port: number;
  clients: ClientRegistry;
  allowedHosts: string[];
  allowedOrigins: string[];
  maxBodyBytes: number;
  maxSessions: number;
  maxSessionsPerClient: number;
  sessionIdleMs: number;
  rateLimitPerMinute: number;
  /** JSON responses and no sessions, for load-balanced deployments. */
  stateless: boolean;
  /** Builds the MCP server of a new session, bound to its principal. */
  createSession(sessionId: string, principal: Principal, stateless: boolean): Server;
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

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  principal: Principal;
  lastSeen: number;
  /** Negotiated at initialize; decides whether JSON-RPC batches exist for this session. */
  protocolVersion: string;
}

const MCP_PATH = "/mcp";
/** The one revision with JSON-RPC batching (added 2025-03-26, removed 2025-06-18). */
const BATCHING_VERSIONS = new Set(["2025-03-26"]);
/** Protocol version of a request without the header (specification, transports). */
const VERSION_WITHOUT_HEADER = "2025-03-26";
const MAX_BATCH_MESSAGES = 10;
/** A client must send its headers within this; a slow-header connection is closed after it. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_CONNECTIONS = 2_000;

/**
 * Streamable HTTP on node:http. Every request: Host and Origin (403), then the bearer (401,
 * `WWW-Authenticate`), then the client's rate (429). A session is bound at `initialize` to the
 * client that opened it; no later request, header or argument can move it to someone else.
 */
export async function serveHttp(options: HttpOptions): Promise<RunningHttp> {
  const sessions = new Map<string, Session>();
  const buckets = new Map<string, { tokens: number; at: number }>();
  const countRequest = options.metrics.counter(
    "portfolio_mcp_http_requests_total",
    "HTTP requests answered, by status.",
  );
  let inFlight = 0;
  let closing = false;
  options.metrics.gauge("portfolio_mcp_sessions_open", "Open MCP sessions.", () => sessions.size);

  const httpServer = createServer((req, res) => {
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
  });
  let allowed = allowedOrigins({
    bindHost: options.host,
    port: options.port,
    allowedHosts: options.allowedHosts,
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
      res
        .writeHead(200, { "Content-Type": "text/plain; version=0.0.4" })
        .end(options.metrics.render());
      return;
    }
    if (path !== MCP_PATH) return reply(res, 404, `Not found; the MCP endpoint is ${MCP_PATH}.`);
    if (closing) return reply(res, 503, "Shutting down.", { "Retry-After": "5" });

    const principal = options.clients.authenticate(req.headers.authorization);
    if (!principal) {
      // RFC 6750: a missing token gets the bare challenge; a wrong one, invalid_token.
      if (!req.headers.authorization)
        return reply(res, 401, "A bearer token is required: send Authorization: Bearer <token>.", {
          "WWW-Authenticate": 'Bearer realm="portfolio-mcp"',
        });
      return reply(
        res,
        401,
        "The bearer token is not one this server knows: check the token the operator gave you (it is case-sensitive, and sent as Authorization: Bearer <token>).",
        {
          "WWW-Authenticate":
            'Bearer realm="portfolio-mcp", error="invalid_token", error_description="unknown token"',
        },
      );
    }
    if (!["GET", "POST", "DELETE"].includes(req.method ?? "")) {
      return reply(res, 405, "Use POST, GET or DELETE on /mcp.", { Allow: "GET, POST, DELETE" });
    }
    const wait = takeToken(principal.id);
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
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;

    if (Array.isArray(body)) {
      // Every message of a batch counts against the client's rate, and batches exist only in
      // the one protocol revision that has them.
      const version =
        existing?.protocolVersion ??
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
      const more = takeToken(principal.id, body.length - 1);
      if (more > 0)
        return reply(res, 429, "Too many requests for this client.", {
          "Retry-After": String(Math.ceil(more / 1000)),
        });
      body = body.map(repairResponse);
    } else {
      body = repairResponse(body);
    }
    if (options.stateless) return serveStateless(req, res, body, principal);

    if (existing) {
      // The token must be the one that opened the session: a session never changes hands.
      if (existing.principal.id !== principal.id)
        return reply(res, 403, "This session belongs to another client.");
      existing.lastSeen = Date.now();
      return existing.transport.handleRequest(req, res, body);
    }
    if (typeof sessionId === "string")
      return rpcError(res, 404, -32001, "Session not found; initialize a new one.");
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      return rpcError(res, 400, -32000, "No session: start with an initialize request.");
    }
    // A client at its quota gives up its oldest idle session, so one client cannot take all.
    const own = [...sessions.entries()].filter(([, s]) => s.principal.id === principal.id);
    if (own.length >= options.maxSessionsPerClient) {
      const [oldestId, oldest] = own.reduce((a, b) => (b[1].lastSeen < a[1].lastSeen ? b : a));
      sessions.delete(oldestId);
      void oldest.server.close().catch(() => {});
      options.logger.info(
        { client: principal.id, sessions: own.length },
        "closed the client's oldest idle session to make room",
      );
    }
    if (sessions.size >= options.maxSessions) {
      return reply(res, 503, "Too many open sessions; retry shortly.", { "Retry-After": "30" });
    }
    const id = randomUUID();
    const protocolVersion = negotiatedVersion(body);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => {
        sessions.set(id, { transport, server, principal, lastSeen: Date.now(), protocolVersion });
      },
    });
    const server = options.createSession(id, principal, false);
    transport.onclose = () => {
      sessions.delete(id);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** One server and transport per request, JSON answers, nothing kept between requests. */
  async function serveStateless(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    principal: Principal,
  ) {
    if (req.method !== "POST")
      return reply(res, 405, "Stateless mode answers POST only.", { Allow: "POST" });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = options.createSession(`stateless:${principal.id}`, principal, true);
    res.on("close", () => {
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** A token bucket per client: a minute's allowance, refilled continuously. */
  function takeToken(clientId: string, count = 1): number {
    const now = Date.now();
    const perMs = options.rateLimitPerMinute / 60_000;
    const bucket = buckets.get(clientId) ?? { tokens: options.rateLimitPerMinute, at: now };
    bucket.tokens = Math.min(options.rateLimitPerMinute, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    buckets.set(clientId, bucket);
    if (bucket.tokens >= count) {
      bucket.tokens -= count;
      return 0;
    }
    return (count - bucket.tokens) / perMs;
  }

  // Idle sessions are closed, transport and server both, so their memory is released.
  const sweep = setInterval(
    () => {
      const cutoff = Date.now() - options.sessionIdleMs;
      for (const [id, session] of sessions) {
        if (session.lastSeen < cutoff) {
          sessions.delete(id);
          void session.server.close().catch(() => {});
          options.logger.info({ sessions: sessions.size }, "idle MCP session closed");
        }
      }
    },
    Math.min(30_000, Math.max(1_000, options.sessionIdleMs / 4)),
  );
  sweep.unref();

  httpServer.headersTimeout = HEADERS_TIMEOUT_MS;
  httpServer.requestTimeout = REQUEST_TIMEOUT_MS;
  httpServer.maxConnections = MAX_CONNECTIONS;
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
    allowedHosts: options.allowedHosts,
    allowedOrigins: options.allowedOrigins,
  });
  const hostForUrl = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${hostForUrl}:${port}${MCP_PATH}`,
    port,
    sessions: () => sessions.size,
    async close(graceMs = 10_000) {
      closing = true;
      clearInterval(sweep);
      const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      httpServer.closeIdleConnections();
      const deadline = Date.now() + graceMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => {})));
      sessions.clear();
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

function reply(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res
    .writeHead(status, { "Content-Type": "text/plain; charset=utf-8", ...headers })
    .end(`${message}\n`);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
}

/** The version an initialize request will get: its own when supported, else our latest. */
function negotiatedVersion(body: unknown): string {
  const asked = (body as { params?: { protocolVersion?: unknown } }).params?.protocolVersion;
  return typeof asked === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
    ? asked
    : LATEST_PROTOCOL_VERSION;
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res
    .writeHead(status, { "Content-Type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
