import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { ApiSettings } from "../../src/config.js";
import { Directory } from "../../src/resources/directory.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { createMcpServer } from "../../src/server.js";
import { clientFor } from "./api.js";

/** The real MCP server and the SDK's own Client, linked in memory, over a sandbox. */
export async function connectInMemory(
  sandbox: Sandbox,
  options: { settings?: Partial<ApiSettings>; exportDir?: string | null } = {},
) {
  const { api, logs } = clientFor(sandbox, options.settings);
  const server = createMcpServer({
    api,
    directory: new Directory(api),
    session: { sessionId: "in-memory", delegatedUser: api["options"].settings.delegatedUser },
    logger: logs.logger,
    exportDir: options.exportDir ?? null,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "portfolio-tests", version: "1.0.0" });
  await client.connect(clientSide);
  return {
    client,
    api,
    logs,
    async close() {
      await client.close();
      await server.close();
      await api.close();
    },
  };
}
