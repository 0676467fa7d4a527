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
