import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVENTORY } from "../../src/inventory/index.js";
import { rawRequest } from "../helpers/raw.js";

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const TOKEN = "http-test-token-0123456789";
let child: ChildProcess;
let url: string;
let banner = "";

beforeAll(async () => {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  );
  child = spawn(process.execPath, [CLI, "serve", "--http", "--sandbox", "--port", "0"], {
    env: { ...env, PORTFOLIO_MCP_TOKEN: TOKEN, PORTFOLIO_LOG_LEVEL: "warn" },
  });
  child.stderr!.setEncoding("utf8");
  for await (const chunk of child.stderr!) {
    banner += chunk;
    if (banner.includes("Stop with Ctrl+C")) break;
  }
  url = /URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(banner)![1]!;
});
afterAll(async () => {
  child.kill("SIGTERM");
  await once(child, "exit");
});

async function connect(token = TOKEN) {
  const client = new Client({ name: "http-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

/** A raw request, so that Host and Origin can be anything. */
const raw = (headers: Record<string, string>, method = "POST", path = "/mcp", body = "{}") =>
  rawRequest(url, method, path, headers, method === "GET" ? undefined : body);

describe("Streamable HTTP", () => {
  it("prints a banner with the URL, the token and ready-to-paste client lines", () => {
    // The operator chose this token: it is never printed, only referred to.
    expect(banner).toContain("Token  from PORTFOLIO_MCP_TOKEN (not printed)");
    expect(banner).not.toContain(TOKEN);
    expect(banner).toContain('--header "Authorization: Bearer $PORTFOLIO_MCP_TOKEN"');
    expect(banner).toContain("mcp-inspector --cli");
    expect(banner).toContain("claude mcp add --transport http portfolio");
    expect(banner).toContain(`"url":"${url}"`);
    expect(banner).toContain("embedded sandbox");
  });

  it("serves a session to a client with the token", async () => {
    const { client, transport } = await connect();
    try {
      // Every tool but the card's buttons: the embedded sandbox brings its contract, so the long tail.
      expect((await client.listTools()).tools).toHaveLength(
        INVENTORY.tools.filter((t) => t.settles !== "app").length,
      );
      const reply = (await client.callTool({
        name: "list_operations",
        arguments: { status: "active", limit: 3 },
      })) as any;
      expect(reply.structuredContent.total).toBe(54);
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      await transport.terminateSession();
    } finally {
      await client.close();
    }
  });

  it("answers 401 with WWW-Authenticate without a token or with a wrong one", async () => {
    const host = new URL(url).host;
    for (const authorization of [
      undefined,
      "Bearer wrong-token",
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN}x`,
    ]) {
      const reply = await raw({
        host,
        "content-type": "application/json",
        ...(authorization ? { authorization } : {}),
      });
      expect(reply.status, String(authorization)).toBe(401);
      expect(reply.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(reply.body).not.toContain(TOKEN);
    }
    await expect(connect("wrong-token")).rejects.toThrow();
  });

  it("answers 403 to a foreign Host or Origin, even with the token", async () => {
    const host = new URL(url).host;
    const authorization = `Bearer ${TOKEN}`;
    expect((await raw({ host: "evil.example", authorization })).status).toBe(403);
    expect(
      (await raw({ host: `attacker.example:${new URL(url).port}`, authorization })).status,
    ).toBe(403);
    expect((await raw({ host, authorization, origin: "https://evil.example" })).status).toBe(403);
    const local = await raw(
      {
        host: `localhost:${new URL(url).port}`,
        authorization,
        origin: `http://localhost:${new URL(url).port}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      "POST",
      "/mcp",
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    );
    expect(local.status).toBe(400); // allowed through the guard; no session yet
  });

  it("answers 404 off /mcp, 404 for an unknown session, 400 for malformed JSON", async () => {
    const host = new URL(url).host;
    const authorization = `Bearer ${TOKEN}`;
    expect((await raw({ host, authorization }, "GET", "/")).status).toBe(404);
    const unknown = await raw(
      {
        host,
        authorization,
        "mcp-session-id": "nope",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      "POST",
      "/mcp",
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    );
    expect(unknown.status).toBe(404);
    const malformed = await raw(
      { host, authorization, "content-type": "application/json" },
      "POST",
      "/mcp",
      "{not json",
    );
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body).error.code).toBe(-32700);
  });
});
