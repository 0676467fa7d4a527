import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Logger } from "../log.js";
import { INVALID_REQUEST } from "./jsonrpc.js";
import { StdioLines } from "./stdio-lines.js";

/**
 * Serves one session over stdin/stdout, as Claude Desktop, Cursor and VS Code launch local
 * servers. stdout carries the protocol only: every log line goes to stderr.
 */
export async function serveStdio(
  server: Server,
  logger: Logger,
  onClose: () => Promise<void>,
  maxMessageBytes: number,
): Promise<void> {
  const lines = new StdioLines(maxMessageBytes, ({ bytes, id }) => {
    logger.error(
      { bytes, limit: maxMessageBytes, id },
      "refused a message larger than PORTFOLIO_MCP_MAX_BODY_BYTES; the session goes on",
    );
    if (id === null) return;
    void transport.send({
      jsonrpc: "2.0",
      id,
      error: {
        code: INVALID_REQUEST,
        message: `The message takes ${bytes} bytes, over this server's limit of ${maxMessageBytes}; it was not processed.`,
      },
    });
  });
  process.stdin.pipe(lines);
  const transport = new StdioServerTransport(lines, process.stdout);
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await onClose();
  };
  transport.onclose = () => void close();
  transport.onerror = (error) => logger.warn({ err: error }, "unreadable stdio message");
  lines.on("end", () => void server.close().then(close));
  await server.connect(transport);
  logger.info("serving MCP over stdio");
}
