import type { IncomingMessage } from "node:http";
import type { Principal } from "./clients.js";
import { INVALID_REQUEST, repairResponse } from "./jsonrpc.js";
import type { Pipeline } from "./pipeline.js";
import type { Answer } from "./replies.js";
import { rate } from "./steps.js";

/** The one revision with JSON-RPC batching (added 2025-03-26, removed 2025-06-18). */
const BATCHING_VERSIONS = new Set(["2025-03-26"]);
/** Protocol version of a request without the header (specification, transports). */
const VERSION_WITHOUT_HEADER = "2025-03-26";
const MAX_BATCH_MESSAGES = 10;

/**
 * The request's message: a POST's body read (413 past the cap) and parsed (400 unless JSON);
 * a batch allowed only in the revision that has them, of 1 to 10 messages, each counted against
 * the client's rate; a client's malformed answer to one of our requests repaired into an error
 * answer (jsonrpc.ts). A GET or DELETE has none.
 */
export async function readMessage(
  req: IncomingMessage,
  principal: Principal,
  p: Pick<Pipeline, "maxBodyBytes" | "sessions" | "limiter">,
): Promise<{ body: unknown } | { answer: Answer }> {
  let body: unknown;
  if (req.method === "POST") {
    const raw = await readBody(req, p.maxBodyBytes);
    if (raw === null)
      return { answer: { status: 413, message: `The body exceeds ${p.maxBodyBytes} bytes.` } };
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      return { answer: badRequest(-32700, "Parse error: the body is not JSON.") };
    }
  }
  if (!Array.isArray(body)) return { body: repairResponse(body) };
  const refused = await checkBatch(req, body, principal, p);
  return refused ? { answer: refused } : { body: body.map(repairResponse) };
}

/**
 * A batch: allowed only in the protocol revision that has them, of 1 to 10 messages, every
 * message counted against the client's rate (the request itself already was).
 */
async function checkBatch(
  req: IncomingMessage,
  batch: unknown[],
  principal: Principal,
  p: Pick<Pipeline, "sessions" | "limiter">,
): Promise<Answer | null> {
  const version =
    p.sessions.find(req)?.protocolVersion ??
    headerValue(req, "mcp-protocol-version") ??
    VERSION_WITHOUT_HEADER;
  if (!BATCHING_VERSIONS.has(version))
    return badRequest(
      INVALID_REQUEST,
      `Protocol version ${version} has no JSON-RPC batches: send one message per request.`,
    );
  if (batch.length === 0 || batch.length > MAX_BATCH_MESSAGES)
    return badRequest(
      INVALID_REQUEST,
      `A batch carries 1 to ${MAX_BATCH_MESSAGES} messages; this one has ${batch.length}.`,
    );
  return rate(principal, batch.length - 1, p);
}

const badRequest = (code: number, message: string): Answer => ({
  status: 400,
  rpc: { code, message },
});

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
