import type { Server } from "@modelcontextprotocol/server";
import {
  StdioServerTransport,
  serveStdio as serveBothEras,
} from "@modelcontextprotocol/server/stdio";
import type { Logger } from "../log.js";
import { INVALID_REQUEST } from "./jsonrpc.js";
import { type Oversized, StdioLines } from "./stdio-lines.js";

/** What serving needs that comes with the configuration, after the transport has started. */
export interface StdioSettings {
  logger: Logger;
  /** PORTFOLIO_MCP_MAX_BODY_BYTES: a longer message is refused by its id. */
  maxMessageBytes: number;
}

/**
 * Serves one client over stdin/stdout, as Claude Desktop, Cursor and VS Code launch local
 * servers, in whichever protocol era its first message opens. It starts before the rest of the
 * server (the configuration, the API client, an embedded sandbox), so that discovery is answered
 * at once: `settings` arrive when they are ready. stdout carries the protocol only: every log line
 * goes to stderr.
 */
export function serveStdio(
  createServer: () => Server,
  settings: Promise<StdioSettings>,
  onClose: () => Promise<void>,
): void {
  const log = (write: (logger: Logger) => void) =>
    void settings.then(({ logger }) => write(logger));
  // The 2025-era server of this connection, once there is one: it may send a log notification.
  let legacy: Server | null = null;
  const lines = new StdioLines((oversized) =>
    refuseOversized(oversized, lines.maxBytes, log, transport, legacy),
  );
  settings.then(
    ({ maxMessageBytes, logger }) => {
      lines.setLimit(maxMessageBytes);
      logger.info("serving MCP over stdio");
    },
    () => {},
  );
  process.stdin.pipe(lines);
  const transport = new StdioServerTransport(lines, process.stdout);
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await handle.close().catch(() => {});
    await onClose();
  };
  const handle = serveBothEras(
    ({ era }) => {
      const server = createServer();
      if (era === "legacy") legacy = server;
      return server;
    },
    {
      transport,
      onerror: (error) => log((logger) => logger.warn({ err: error }, "unreadable stdio message")),
    },
  );
  lines.on("end", () => void close());
}

/**
 * A message over the size limit: logged, answered by its id with a refusal unless the stream
 * already settled it, or, with no id to answer, told once to the connection in a log
 * notification where the protocol has them (2025 sessions, at the level the client set; 2026 has
 * none over stdio).
 */
function refuseOversized(
  { bytes, id, answer }: Oversized,
  limit: number,
  log: (write: (logger: Logger) => void) => void,
  transport: StdioServerTransport,
  legacy: Server | null,
): void {
  log((logger) =>
    logger.error(
      { bytes, limit, id, answer },
      id === null
        ? "refused a message larger than PORTFOLIO_MCP_MAX_BODY_BYTES whose id cannot be read; the session goes on"
        : "refused a message larger than PORTFOLIO_MCP_MAX_BODY_BYTES; the session goes on",
    ),
  );
  if (answer && id !== null) return; // settled as a refusal in the stream (StdioLines)
  const refusal = `The message takes ${bytes} bytes, over this server's limit of ${limit}; it was not processed.`;
  if (id !== null) {
    void transport.send({
      jsonrpc: "2.0",
      id,
      error: { code: INVALID_REQUEST, message: refusal },
    });
    return;
  }
  void legacy
    ?.sendLoggingMessage({
      level: "error",
      logger: "portfolio-mcp",
      data: `${refusal} No id could be read from it, so no request is answered for it.`,
    })
    .catch(() => {});
}
