import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Logger } from "../log.js";

/**
 * Serves one session over stdin/stdout, as Claude Desktop, Cursor and VS Code launch local
 * servers. stdout carries the protocol only: every log line goes to stderr.
 */
export async function serveStdio(
  server: Server,
  logger: Logger,
  onClose: () => Promise<void>,
): Promise<void> {
  const transport = new StdioServerTransport();
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await onClose();
  };
  transport.onclose = () => void close();
  process.stdin.on("end", () => void server.close().then(close));
  await server.connect(transport);
  logger.info("serving MCP over stdio");
}
