import type { ServerResponse } from "node:http";

/** The few kinds of answers the HTTP transport writes itself. */

export function reply(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res
    .writeHead(status, { "Content-Type": "text/plain; charset=utf-8", ...headers })
    .end(`${message}\n`);
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
}

/** A JSON-RPC error carrying the request's id, when the request had one. */
export function rpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id: string | number | null = null,
  headers: Record<string, string> = {},
): void {
  res
    .writeHead(status, { "Content-Type": "application/json", ...headers })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id }));
}

/**
 * An answer a step of the HTTP pipeline gives instead of passing the request on: a line of
 * text (reply), a JSON document, a JSON-RPC error, or a body of its own type (the metrics).
 */
export type Answer =
  | { status: number; message: string; headers?: Record<string, string> }
  | { status: number; json: unknown; headers?: Record<string, string> }
  | { status: number; rpc: { code: number; message: string } }
  | { status: number; raw: string; headers: Record<string, string> };

/** Writes a step's answer. */
export function answer(res: ServerResponse, given: Answer): void {
  if ("message" in given) reply(res, given.status, given.message, given.headers);
  else if ("rpc" in given) rpcError(res, given.status, given.rpc.code, given.rpc.message);
  else if ("raw" in given) res.writeHead(given.status, given.headers).end(given.raw);
  else
    res
      .writeHead(given.status, { "Content-Type": "application/json", ...given.headers })
      .end(JSON.stringify(given.json));
}
