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
  /** Calls (POSTs) in flight: a busy session is never closed to make room. */
  busy: number;
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
 * sessions are closed, transport and server both, so their memory is released.
 *
 * Two caps. A client at its own quota gives up its least recently used idle session for a new
 * one. When the total is reached, a client holding fewer sessions than the largest holder
 * takes the least recently used idle session of that holder (the one holding the most; of
 * equals, the one whose idle session is oldest): a client with none can always open one, and
 * the sessions end up shared out rather than first come, first served. A client already among
 * the largest holders is refused (503, Retry-After), as is anyone when every candidate session
 * has a call in flight: a session in the middle of a call (a confirmation form waiting for its
 * person, say) is never taken.
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
    if (existing) return this.resume(existing, id as string, req, res, body, principal);
    const requestId = idOf(body);
    if (typeof id === "string")
      return rpcError(res, 404, -32001, "Session not found; initialize a new one.", requestId);
    if (req.method !== "POST" || !isInitializeRequest(body))
      return rpcError(res, 400, -32000, "No session: start with an initialize request.", requestId);
    const full = this.makeRoom(principal);
    if (full) {
      this.options.logger.warn(
        { client: principal.id, sessions: this.sessions.size },
        "refused a new session: no session could be freed for it",
      );
      return rpcError(res, 503, -32000, full, requestId, { "Retry-After": "30" });
    }
    await this.open(req, res, body, principal);
  }

  /** A request of an open session, from the client (and with the permissions) that opened it. */
  private resume(
    existing: Session,
    id: string,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    principal: Principal,
  ): Promise<void> | void {
    const requestId = idOf(body);
    // The token must be the one that opened the session: a session never changes hands.
    if (existing.principal.id !== principal.id)
      return rpcError(res, 403, -32000, "This session belongs to another client.", requestId);
    // The same user with other permissions (a new sign-in granted or dropped portfolio:write):
    // a session's tool list is fixed, so it ends and the client starts one that fits.
    if (existing.principal.readOnly !== principal.readOnly) {
      this.drop(id, existing);
      return rpcError(
        res,
        404,
        -32001,
        "Session not found: the access token's permissions changed; initialize a new session.",
        requestId,
      );
    }
    existing.lastSeen = Date.now();
    if (req.method === "POST") track(existing, res);
    return existing.transport.handleRequest(req, res, body);
  }

  /** A new session for an initialize request: its server, and a transport that files it. */
  private async open(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    principal: Principal,
  ): Promise<void> {
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
          busy: 0,
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

  /**
   * Frees one session for `principal`'s new one when a cap says so (see the class); the
   * sentence refusing the new session when none can be freed, else null.
   */
  private makeRoom(principal: Principal): string | null {
    const held = new Map<string, Array<[string, Session]>>();
    for (const entry of this.sessions) {
      const client = entry[1].principal.id;
      held.set(client, [...(held.get(client) ?? []), entry]);
    }
    const own = held.get(principal.id) ?? [];
    if (own.length >= this.options.maxSessionsPerClient) {
      const idle = leastRecentlyUsedIdle(own);
      if (!idle)
        return `This client's ${own.length} sessions each have a call in flight; retry shortly.`;
      this.closeForRoom(idle, principal, "its own quota");
      return null;
    }
    if (this.sessions.size < this.options.maxSessions) return null;
    // Only from a client holding more than the newcomer: the most first, then the oldest idle.
    const [taken] = [...held.entries()]
      .filter(([, sessions]) => sessions.length > own.length)
      .map(([, sessions]) => ({ count: sessions.length, idle: leastRecentlyUsedIdle(sessions) }))
      .filter((holder) => holder.idle !== null)
      .sort(
        (a, b) => b.count - a.count || (a.idle?.[1].lastSeen ?? 0) - (b.idle?.[1].lastSeen ?? 0),
      );
    if (!taken?.idle) return "Too many open sessions; retry shortly.";
    this.closeForRoom(taken.idle, principal, "the total");
    return null;
  }

  private closeForRoom(
    entry: [string, Session] | null,
    principal: Principal,
    cap: "its own quota" | "the total",
  ): void {
    if (!entry) return;
    const [id, session] = entry;
    this.drop(id, session);
    this.options.logger.info(
      { client: principal.id, closedFor: session.principal.id, cap, sessions: this.sessions.size },
      "closed the least recently used idle session to make room for a new one",
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

/** Counts a call in flight on a session until its answer is done. */
function track(session: Session, res: ServerResponse): void {
  session.busy++;
  res.once("close", () => {
    session.busy--;
  });
}

/** Of these sessions, the one unused the longest with no call in flight; null when all are busy. */
function leastRecentlyUsedIdle(sessions: Array<[string, Session]>): [string, Session] | null {
  let found: [string, Session] | null = null;
  for (const entry of sessions)
    if (entry[1].busy === 0 && (!found || entry[1].lastSeen < found[1].lastSeen)) found = entry;
  return found;
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
