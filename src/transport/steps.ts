import type { IncomingMessage } from "node:http";
import type { Principal } from "./clients.js";
import { checkHostAndOrigin } from "./guard.js";
import { METADATA_PATHS, SCOPE_WRITE } from "./oauth-metadata.js";
import type { Pipeline } from "./pipeline.js";
import type { Answer } from "./replies.js";

/**
 * The steps of an HTTP request before its message (pipeline.ts runs them in order): each
 * answers the request (an Answer) or lets it on (null), and each can be tried alone.
 */

export const MCP_PATH = "/mcp";

/** Host and Origin: a DNS-rebinding page or a cross-site page is refused first (guard.ts). */
export function guard(req: IncomingMessage, p: Pick<Pipeline, "allowed">): Answer | null {
  const refusal = checkHostAndOrigin(req, p.allowed);
  return refusal ? { status: refusal.status, message: refusal.message } : null;
}

/**
 * What anyone may ask without a token: health, readiness, metrics, and how to sign in (RFC
 * 9728, at both well-known addresses). Any other path than the MCP endpoint is not found; the
 * endpoint is refused while the server shuts down. Null: on to sign-in.
 */
export async function openPaths(
  req: IncomingMessage,
  path: string,
  p: Pick<Pipeline, "ready" | "metrics" | "auth" | "closing">,
): Promise<Answer | null> {
  const get = req.method === "GET";
  if (get && path === "/healthz") return { status: 200, json: { status: "ok" } };
  if (get && path === "/readyz") {
    const verdict = await p.ready();
    return verdict.ready
      ? { status: 200, json: { status: "ready" } }
      : { status: 503, json: { status: "not ready", reason: verdict.reason } };
  }
  if (get && path === "/metrics") {
    const text = await p.metrics.render();
    return { status: 200, raw: text, headers: { "Content-Type": "text/plain; version=0.0.4" } };
  }
  const metadata = get && METADATA_PATHS.includes(path) && p.auth.metadata();
  if (metadata) return { status: 200, json: metadata, headers: { "Cache-Control": "max-age=300" } };
  if (path !== MCP_PATH)
    return { status: 404, message: `Not found; the MCP endpoint is ${MCP_PATH}.` };
  if (p.closing) return { status: 503, message: "Shutting down.", headers: { "Retry-After": "5" } };
  return null;
}

/**
 * The bearer: a clients-file token or, with sign-in on, an OAuth access token (authenticate.ts).
 * A refusal is told to the observers (401 with `WWW-Authenticate`).
 */
export async function authenticate(
  req: IncomingMessage,
  p: Pick<Pipeline, "auth" | "observer">,
): Promise<{ principal: Principal } | { answer: Answer }> {
  const outcome = await p.auth.authenticate(req.headers.authorization);
  if (outcome.ok) return { principal: outcome.principal };
  p.observer?.signInRefused?.({ reason: outcome.reason, status: outcome.status, principal: null });
  return { answer: { status: outcome.status, message: outcome.message, headers: outcome.headers } };
}

/** The methods of the MCP endpoint: POST a call, GET the event stream, DELETE the session. */
export function allowedMethod(req: IncomingMessage): Answer | null {
  if (["GET", "POST", "DELETE"].includes(req.method ?? "")) return null;
  return {
    status: 405,
    message: "Use POST, GET or DELETE on /mcp.",
    headers: { Allow: "GET, POST, DELETE" },
  };
}

/** The client's rate: `messages` more requests of its share this minute, or 429. */
export async function rate(
  principal: Principal,
  messages: number,
  p: Pick<Pipeline, "limiter">,
): Promise<Answer | null> {
  const wait = await p.limiter.take(principal.id, messages);
  if (wait <= 0) return null;
  return {
    status: 429,
    message: "Too many requests for this client.",
    headers: { "Retry-After": String(Math.ceil(wait / 1000)) },
  };
}

/**
 * A token without portfolio:write that calls a write tool: the MCP authorization spec's
 * step-up, 403 insufficient_scope, so the client can sign in again for more. Refused here,
 * before any server sees it, whatever the session was opened with.
 */
export function stepUp(
  principal: Principal,
  body: unknown,
  p: Pick<Pipeline, "auth" | "observer" | "isWriteTool">,
): Answer | null {
  const writing = principal.oauth?.lacksWriteScope && callsTool(body, p.isWriteTool);
  if (!writing) return null;
  p.observer?.signInRefused?.({ reason: "scope", status: 403, principal: `http:${principal.id}` });
  const step = p.auth.insufficientScope(
    `${writing} writes, and the access token does not grant ${SCOPE_WRITE}; sign in again and allow writing. Nothing was sent.`,
  );
  return { status: step.status, message: step.message, headers: step.headers };
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
