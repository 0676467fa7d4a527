#!/usr/bin/env node
// The protocol floor: the least an MCP server can do for list_operations. One tool, one fetch
// with a fixed bearer, the body returned untouched. Over stdio, or Streamable HTTP with --http.
//   FLOOR_BASE_URL=... FLOOR_BEARER=... node bench/floor-server.mjs [--http]
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const base = process.env.FLOOR_BASE_URL;
const bearer = process.env.FLOOR_BEARER;

function floorServer() {
  const server = new McpServer({ name: "floor", version: "1.0.0" });
  server.registerTool(
    "list_operations",
    {
      description: "List operations.",
      inputSchema: { status: z.string().optional(), limit: z.number().optional() },
    },
    async ({ status, limit }) => {
      const query = new URLSearchParams();
      if (status) query.set("status", status);
      if (limit) query.set("limit", String(limit));
      const res = await fetch(`${base}/operations?${query}`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
      return { content: [{ type: "text", text: await res.text() }] };
    },
  );
  return server;
}

if (process.argv.includes("--http")) {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    let transport = sessions.get(req.headers["mcp-session-id"]);
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      await floorServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  http.listen(Number(process.env.FLOOR_PORT ?? 0), "127.0.0.1", () =>
    process.stderr.write(`floor listening at http://127.0.0.1:${http.address().port}/mcp\n`),
  );
} else {
  await floorServer().connect(new StdioServerTransport());
}
