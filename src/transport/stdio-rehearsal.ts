import { PassThrough } from "node:stream";
import type { Server } from "@modelcontextprotocol/server";
import {
  StdioServerTransport,
  serveStdio as serveBothEras,
} from "@modelcontextprotocol/server/stdio";
import { StdioLines } from "./stdio-lines.js";

/**
 * A client's first exchange, as the 2025 era opens it: what the rehearsal plays. (The tests and
 * scripts write the same messages by hand; src/ does not import from them, nor they from here.)
 */
const FIRST_EXCHANGE = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "portfolio-mcp-rehearsal", version: "1" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
];

/**
 * Plays a client's first exchange (initialize, then tools/list) once through the stdio path
 * over in-memory pipes, and drops the answers: V8 parses and compiles the functions a request
 * runs through (reading the line, the protocol's dispatch, the handler, the answer's encoding)
 * now, in idle time, rather than while the client waits for its first tools/list. `createServer`
 * gives a server that observes nothing (no audit trail, no metrics): this is nobody's request.
 * Settles once every request has its answer; never fails.
 */
export async function rehearseStdio(createServer: () => Server): Promise<void> {
  const input = new StdioLines(() => {});
  const output = new PassThrough();
  const handle = serveBothEras(() => createServer(), {
    transport: new StdioServerTransport(input, output),
  });
  let awaited = FIRST_EXCHANGE.filter((m) => "id" in m).length;
  const answered = new Promise<void>((resolve) => {
    output.on("data", (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 0x0a) awaited--;
      if (awaited <= 0) resolve();
    });
  });
  input.setLimit(Number.MAX_SAFE_INTEGER);
  for (const message of FIRST_EXCHANGE) input.write(`${JSON.stringify(message)}\n`);
  try {
    await answered;
  } finally {
    await handle.close().catch(() => {});
    input.end();
    output.destroy();
  }
}
