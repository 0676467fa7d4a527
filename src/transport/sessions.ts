import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node";
import {
  isInitializeRequest,
  LATEST_PROTOCOL_VERSION,
  type Server,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";
import type { Logger } from "../log.js";
import type { Principal } from "./clients.js";
import { rpcError } from "./replies.js";

interface Session {
  transport: NodeStreamableHTTPServerTransport;
  server: Server;
  principal: Principal;
  lastSeen: number;
  /** Negotiated at initialize; decides whether JSON-RPC batches exist for this session. */
  protocolVersion: string;
}

export interface SessionOptions {
  maxSessions: number;
  maxSessionsPerClient: number;
  idleMs: number;
  createServer(principal: Principal, sessionId: string): Server;
  logger: Logger;
}

/**
 * The sessions of 2025-era clients (initialize, Mcp-Session-Id, the GET stream), each bound at
 * initialize to the client that opened it: no later request can move it to someone else. Idle
 * sessions are closed, transport and server both, so their memory is released; a client at its
 * quota gives up its own oldest idle session, so no client can take every one.
 */
export class Sessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly options: SessionOptions) {
    this.sweep = setInterval(
      () => this.closeIdle(),
      Math.min(30_000, Math.max(1_000, options.idleMs / 4)),
    );
    this.sweep.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The session a request names, when it exists. */
  find(req: IncomingMessage): Session | undefined {
    const id = req.headers["mcp-session-id"];
    return typeof id === "string" ? this.sessions.get(id) : undefined;
  }

  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    principal: Principal,
  ): Promise<void> {
    const id = req.headers["mcp-session-id"];
    const existing = this.find(req);
    const requestId = idOf(body);
    if (existing) {
      // The token must be the one that opened the session: a session never changes hands.
      if (existing.principal.id !== principal.id)
        return rpcError(res, 403, -32000, "This session belongs to another client.", requestId);
      // The same user with other permissions (a new sign-in granted or dropped portfolio:write):
      // a session's tool list is fixed, so it ends and the client starts one that fits.
      if (existing.principal.readOnly !== principal.readOnly) {
        this.drop(id as string, existing);
        return rpcError(
          res,
          404,
          -32001,
          "Session not found: the access token's permissions changed; initialize a new session.",
          requestId,
        );
      }
      existing.lastSeen = Date.now();
      return existing.transport.handleRequest(req, res, body);
    }
    if (typeof id === "string")
      return rpcError(res, 404, -32001, "Session not found; initialize a new one.", requestId);
    if (req.method !== "POST" || !isInitializeRequest(body))
      return rpcError(res, 400, -32000, "No session: start with an initialize request.", requestId);
    this.makeRoom(principal);
    if (this.sessions.size >= this.options.maxSessions) {
      return rpcError(res, 503, -32000, "Too many open sessions; retry shortly.", requestId, {
        "Retry-After": "30",
      });
    }
    const sessionId = randomUUID();
    const protocolVersion = negotiatedVersion(body);
    const server = this.options.createServer(principal, sessionId);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      onsessioninitialized: () => {
        this.sessions.set(sessionId, {
          transport,
          server,
          principal,
          lastSeen: Date.now(),
          protocolVersion,
        });
      },
    });
    transport.onclose = () => {
      this.sessions.delete(sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.sessions.values()].map((s) => s.server.close().catch(() => {})));
    this.sessions.clear();
  }

  private drop(id: string, session: Session): void {
    this.sessions.delete(id);
    void session.server.close().catch(() => {});
  }

  private makeRoom(principal: Principal): void {
    const own = [...this.sessions.entries()].filter(([, s]) => s.principal.id === principal.id);
    if (own.length < this.options.maxSessionsPerClient) return;
    const [oldestId, oldest] = own.reduce((a, b) => (b[1].lastSeen < a[1].lastSeen ? b : a));
    this.sessions.delete(oldestId);
    void oldest.server.close().catch(() => {});
    this.options.logger.info(
      { client: principal.id, sessions: own.length },
      "closed the client's oldest idle session to make room",
    );
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.options.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen < cutoff) {
        this.sessions.delete(id);
        void session.server.close().catch(() => {});
        this.options.logger.info({ sessions: this.sessions.size }, "idle MCP session closed");
      }
    }
  }
}

/** The version an initialize request will get: its own when supported, else our latest. */
function negotiatedVersion(body: unknown): string {
  const asked = (body as { params?: { protocolVersion?: unknown } }).params?.protocolVersion;
  return typeof asked === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
    ? asked
    : LATEST_PROTOCOL_VERSION;
}

/** The JSON-RPC id of a single request body, so an error can carry it. */
export function idOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
