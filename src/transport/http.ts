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
import type { Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import type { Verdict } from "../readiness.js";
import type { ClientRegistry, Principal } from "./clients.js";
import { allowedOrigins, checkHostAndOrigin } from "./guard.js";
import { INVALID_REQUEST, repairResponse } from "./jsonrpc.js";
import { LocalRateLimiter, type RateLimiter } from "./rate-limit.js";
import { json, reply, rpcError } from "./replies.js";
import { Sessions } from "./sessions.js";

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
  /** Counts each client's requests; default: in this process (Redis: across replicas). */
  rateLimiter?: RateLimiter;
  /** No session state kept: every request is answered by a fresh server (both eras). */
  stateless: boolean;
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
 * a slow-header client cannot hold connections open without a token. 2,000 at most.
 */
const CONNECTIONS = { headersTimeoutMs: 10_000, checkEveryMs: 2_000, max: 2_000 };
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Streamable HTTP on node:http, both protocol eras on one endpoint. Every request: Host and
 * Origin (403), then the bearer (401, `WWW-Authenticate`), then the client's rate (429), then
 * the body. 2026-07-28 requests (a per-request envelope) are answered by a fresh server each;
 * 2025 requests by their session's server (or, with `stateless`, by a fresh one each too).
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
    "portfolio_mcp_http_requests_total",
    "HTTP requests answered, by status.",
  );
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

    (req as IncomingMessage & { auth?: AuthInfo }).auth = {
      token: "[held by the transport]",
      clientId: principal.id,
      scopes: [],
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
  httpServer.maxConnections = connections.max;
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
