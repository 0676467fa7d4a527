import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.js";
import { allowedOrigins, bearerMatches, checkHostAndOrigin } from "./guard.js";

export interface HttpOptions {
  host: string;
  port: number;
  token: string;
  allowedHosts: string[];
  allowedOrigins: string[];
  maxBodyBytes?: number;
  /** Builds the MCP server of a new session. */
  createSession(sessionId: string): Server;
  logger: Logger;
}

export interface RunningHttp {
  url: string;
  port: number;
  sessions(): number;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
}

const MCP_PATH = "/mcp";

/**
 * Streamable HTTP at /mcp on node:http: Host and Origin checked (403), a bearer required
 * (401), one MCP server and transport per session.
 */
export async function serveHttp(options: HttpOptions): Promise<RunningHttp> {
  const sessions = new Map<string, Session>();
  const maxBody = options.maxBodyBytes ?? 1_048_576;
  const httpServer = createServer((req, res) => {
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
    if (path !== MCP_PATH) return reply(res, 404, `Not found; the MCP endpoint is ${MCP_PATH}.`);
    if (!bearerMatches(req.headers.authorization, options.token)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="portfolio-mcp"');
      return reply(
        res,
        401,
        "A bearer token is required: Authorization: Bearer <PORTFOLIO_MCP_TOKEN>.",
      );
    }
    if (!["GET", "POST", "DELETE"].includes(req.method ?? "")) {
      res.setHeader("Allow", "GET, POST, DELETE");
      return reply(res, 405, "Use POST, GET or DELETE on /mcp.");
    }
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    let body: unknown;
    if (req.method === "POST") {
      const raw = await readBody(req, maxBody);
      if (raw === null) return reply(res, 413, `The body exceeds ${maxBody} bytes.`);
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        return rpcError(res, 400, -32700, "Parse error: the body is not JSON.");
      }
    }
    if (existing) return existing.transport.handleRequest(req, res, body);
    if (typeof sessionId === "string")
      return rpcError(res, 404, -32001, "Session not found; initialize a new one.");
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      return rpcError(res, 400, -32000, "No session: start with an initialize request.");
    }
    const newId = randomUUID();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => newId,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
        options.logger.info({ sessions: sessions.size }, "MCP session opened");
      },
    });
    const server = options.createSession(newId);
    transport.onclose = () => {
      if (transport.sessionId && sessions.delete(transport.sessionId)) {
        options.logger.info({ sessions: sessions.size }, "MCP session closed");
      }
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
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
    async close() {
      await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => {})));
      sessions.clear();
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
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

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" }).end(`${message}\n`);
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res
    .writeHead(status, { "Content-Type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
