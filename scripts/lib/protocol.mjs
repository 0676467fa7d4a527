/** The first message of an MCP session, written by hand for scripts that time the raw exchange. */
export const initializeRequest = (clientName) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: clientName, version: "1" },
  },
});
