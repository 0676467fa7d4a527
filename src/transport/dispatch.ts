import type { IncomingMessage, ServerResponse } from "node:http";
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node";
import { type AuthInfo, classifyInboundRequest } from "@modelcontextprotocol/server";
import type { Principal } from "./clients.js";
import type { Pipeline } from "./pipeline.js";
import { reply } from "./replies.js";

/**
 * The last step: the request, with its principal riding on it as the SDK's AuthInfo, to the
 * server that answers it. A 2026-07-28 request (a per-request envelope) to a fresh server; a
 * 2025 request to its session's server, or, stateless, to a fresh one too.
 */
export async function dispatch(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  principal: Principal,
  p: Pick<Pipeline, "modern" | "stateless" | "sessions" | "createServer">,
): Promise<void> {
  (req as IncomingMessage & { auth?: AuthInfo }).auth = {
    token: "[held by the transport]",
    clientId: principal.id,
    scopes: [...(principal.oauth?.scopes ?? [])],
    extra: { principal },
  };
  if (!isLegacy(req, body)) return p.modern(req, res, body);
  if (p.stateless) return statelessLegacy(req, res, body, () => p.createServer(principal, null));
  return p.sessions.handle(req, res, body, principal);
}

/** A 2025 request without sessions: a fresh server and transport, a JSON answer. */
async function statelessLegacy(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  createServer: () => ReturnType<Pipeline["createServer"]>,
): Promise<void> {
  if (req.method !== "POST")
    return reply(res, 405, "Stateless mode answers POST only.", { Allow: "POST" });
  const transport = new NodeStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  const server = createServer();
  res.on("close", () => void server.close());
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
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
