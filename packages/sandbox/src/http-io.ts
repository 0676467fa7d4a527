import { randomBytes } from "node:crypto";
import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Problem } from "./problem.js";
import type { RouteResult } from "./routing.js";

/** Reads the whole body, refusing more than `maxBytes` with 413. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function tooLarge(maxBytes: number): Problem {
  return new Problem(413, `The body exceeds ${maxBytes} bytes.`, {
    reasonCode: "payload_too_large",
  });
}

/** The body as JSON for routes that take one; a clear 415 or 422 when it is not JSON. */
export function parseJsonBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  if (!/^application\/(.+\+)?json\b/i.test(contentType ?? "")) {
    throw new Problem(415, "Send the body as application/json.", {
      reasonCode: "unsupported_media_type",
    });
  }
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch (error) {
    throw new Problem(422, `body: is not valid JSON (${(error as Error).message})`, {
      reasonCode: "invalid_json",
      errors: [{ field: "body", rule: "valid JSON", message: "is not valid JSON" }],
    });
  }
}

/**
 * What the request log keeps of a body: JSON when it parses, else text, null when empty; a
 * multipart body only by its size, as files are bytes, not text.
 */
export function bodyForLog(raw: Buffer, contentType?: string): unknown {
  if (raw.length === 0) return null;
  if (/^multipart\//i.test(contentType ?? "")) return `<multipart body, ${raw.length} bytes>`;
  const text = raw.toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The header lines of each part of a multipart body, as received: what a test needs to see of
 * an upload (names, file names, types, and any line that should not be there), never the bytes.
 */
export function multipartHeadersForLog(raw: Buffer, contentType?: string): string[][] | undefined {
  const boundary = /^multipart\/[^;]*;.*\bboundary="?([^";\s]+)"?/i.exec(contentType ?? "")?.[1];
  if (!boundary || raw.length === 0) return undefined;
  const text = raw.toString("latin1");
  const parts: string[][] = [];
  for (const part of text.split(`--${boundary}`).slice(1, 21)) {
    if (part.startsWith("--")) break;
    const end = part.indexOf("\r\n\r\n");
    if (end === -1) continue;
    parts.push(part.slice(2, Math.min(end, 4096)).split("\r\n"));
  }
  return parts;
}

/** The caller's X-Request-ID when it is a sane token, else a fresh one. */
export function pickRequestId(header: string | string[] | undefined): string {
  if (typeof header === "string" && /^[!-~]{1,200}$/.test(header)) return header;
  return `req_${randomBytes(9).toString("base64url")}`;
}

export function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/**
 * A result's JSON grown to `bytes` by a `padding` field, written in 64 KiB chunks as the client
 * takes them (the whole answer is never held), until the client goes away.
 */
export async function sendPadded(
  res: ServerResponse,
  result: RouteResult,
  options: { bytes: number; declareLength?: boolean },
  common: Record<string, string>,
): Promise<void> {
  const json = JSON.stringify(result.json ?? null);
  const open =
    json.startsWith("{") && json !== "{}"
      ? `${json.slice(0, -1)},"padding":"`
      : json === "{}"
        ? '{"padding":"'
        : `{"result":${json},"padding":"`;
  const close = '"}';
  const fill = Math.max(0, options.bytes - open.length - close.length);
  const headers: Record<string, string> = {
    ...common,
    ...result.headers,
    "Content-Type": "application/json; charset=utf-8",
  };
  if (options.declareLength !== false)
    headers["Content-Length"] = String(Buffer.byteLength(open) + fill + close.length);
  res.writeHead(result.status, headers);
  const closed = once(res, "close").catch(() => undefined);
  const write = (chunk: string | Buffer) =>
    res.write(chunk) ? undefined : Promise.race([once(res, "drain"), closed]);
  const gone = () => res.destroyed || res.writableEnded;
  const block = Buffer.alloc(65_536, "x");
  await write(open);
  for (let left = fill; left > 0 && !gone(); left -= block.length)
    await write(left >= block.length ? block : block.subarray(0, left));
  if (!gone()) res.end(close);
}

export function sendResult(
  res: ServerResponse,
  result: RouteResult,
  common: Record<string, string>,
): void {
  const headers: Record<string, string> = { ...common, ...result.headers };
  let payload: Buffer | string = "";
  if (result.bytes) {
    payload = result.bytes;
    headers["Content-Type"] = result.contentType ?? "application/octet-stream";
  } else if (result.json !== undefined) {
    payload = JSON.stringify(result.json);
    headers["Content-Type"] = result.contentType ?? "application/json; charset=utf-8";
  }
  headers["Content-Length"] = String(Buffer.byteLength(payload));
  res.writeHead(result.status, headers);
  res.end(payload);
}
