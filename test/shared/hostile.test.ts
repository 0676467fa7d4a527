import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/transport/clients.js";
import { MCP_HEADERS } from "../helpers/raw.js";
import { startShared } from "../helpers/shared.js";

const TOKEN = "hostile-token-0123456789abcdef";
const OTHER = "other-client-token-0123456789";
const USER = { email: "camille.martin@aurore-capital.example" };
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

const initialize = (protocolVersion: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "hostile", version: "1" } },
  });
const toolCall = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "list_deals", arguments: { limit: 1 } },
});

type Shared = Awaited<ReturnType<typeof startShared>>;
/** A session opened by hand at a chosen protocol version; its id and request headers. */
async function openSession(shared: Shared, token: string, version: string) {
  const auth = { ...MCP_HEADERS, authorization: `Bearer ${token}` };
  const reply = await shared.raw("POST", "/mcp", auth, initialize(version));
  expect(reply.status).toBe(200);
  const id = String(reply.headers["mcp-session-id"]);
  const headers = { ...auth, "mcp-session-id": id, "mcp-protocol-version": version };
  await shared.raw(
    "POST",
    "/mcp",
    headers,
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  );
  return { id, headers };
}

describe("a hostile client over HTTP", () => {
  it("cannot slip a batch past the rate limit: batches exist in 2025-03-26 sessions only, 10 at most, each message counted", async () => {
    const shared = await startShared(sandbox, [{ name: "c", token: TOKEN, delegated_user: USER }], {
      PORTFOLIO_MCP_RATE_LIMIT_PER_MINUTE: "20",
    });
    try {
      const mark = sandbox.control.mark();
      const modern = await openSession(shared, TOKEN, "2025-06-18");
      const hundred = JSON.stringify(Array.from({ length: 100 }, (_, i) => toolCall(i + 10)));
      const refused = await shared.raw("POST", "/mcp", modern.headers, hundred);
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.body).error).toEqual({
        code: -32600,
        message:
          "Protocol version 2025-06-18 has no JSON-RPC batches: send one message per request.",
      });

      const old = await openSession(shared, TOKEN, "2025-03-26");
      const tooMany = await shared.raw("POST", "/mcp", old.headers, hundred);
      expect(tooMany.status).toBe(400);
      expect(JSON.parse(tooMany.body).error.message).toBe(
        "A batch carries 1 to 10 messages; this one has 100.",
      );
      expect(sandbox.control.requests({ since: mark, routeId: "deals_list" })).toHaveLength(0);

      const ten = JSON.stringify(Array.from({ length: 10 }, (_, i) => toolCall(i + 200)));
      expect((await shared.raw("POST", "/mcp", old.headers, ten)).status).toBe(200);
      expect(sandbox.control.requests({ since: mark, routeId: "deals_list" })).toHaveLength(10);
      // 6 requests so far (two sessions opened, two refused batches), 10 now: 4 of 20 are left.
      const again = await shared.raw("POST", "/mcp", old.headers, ten);
      expect(again.status).toBe(429);
      expect(Number(again.headers["retry-after"])).toBeGreaterThan(0);
      expect(sandbox.control.requests({ since: mark, routeId: "deals_list" })).toHaveLength(10);
    } finally {
      await shared.stop();
    }
  });

  it("cannot take every session: at its quota, its own oldest idle session is closed", async () => {
    const shared = await startShared(
      sandbox,
      [
        { name: "greedy", token: TOKEN, delegated_user: USER },
        { name: "other", token: OTHER, delegated_user: USER },
      ],
      { PORTFOLIO_MCP_MAX_SESSIONS: "3", PORTFOLIO_MCP_MAX_SESSIONS_PER_CLIENT: "2" },
    );
    try {
      const ping = (headers: Record<string, string>) =>
        shared.raw(
          "POST",
          "/mcp",
          headers,
          JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
        );
      const first = await openSession(shared, TOKEN, "2025-06-18");
      const second = await openSession(shared, TOKEN, "2025-06-18");
      await ping(second.headers); // the first is now the oldest idle one
      const third = await openSession(shared, TOKEN, "2025-06-18");
      expect((await ping(first.headers)).status).toBe(404);
      expect((await ping(second.headers)).status).toBe(200);
      expect((await ping(third.headers)).status).toBe(200);
      const others = await openSession(shared, OTHER, "2025-06-18");
      expect((await ping(others.headers)).status).toBe(200);
    } finally {
      await shared.stop();
    }
  });

  it("tells a missing bearer from a wrong one", async () => {
    const shared = await startShared(sandbox, [{ name: "c", token: TOKEN, delegated_user: USER }]);
    try {
      const missing = await shared.raw("POST", "/mcp", MCP_HEADERS, initialize("2025-06-18"));
      expect(missing.status).toBe(401);
      expect(missing.body).toBe(
        "A bearer token is required: send Authorization: Bearer <token>.\n",
      );
      expect(missing.headers["www-authenticate"]).toBe('Bearer realm="portfolio-mcp"');
      const wrong = await shared.raw(
        "POST",
        "/mcp",
        { ...MCP_HEADERS, authorization: "Bearer not-the-token-0123456789" },
        initialize("2025-06-18"),
      );
      expect(wrong.status).toBe(401);
      expect(wrong.body).toMatch(/^The bearer token is not one this server knows/);
      expect(wrong.headers["www-authenticate"]).toContain('error="invalid_token"');
      expect(wrong.body).not.toContain("not-the-token");
    } finally {
      await shared.stop();
    }
  });
});

describe("startup refusals say what to do", () => {
  const env = () => ({
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_"))),
    PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
    PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
    PORTFOLIO_API_SECRET: sandbox.credentials.secret,
    PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "startup-")),
  });
  const clientsFile = (clients: unknown[]) => {
    const file = join(mkdtempSync(join(tmpdir(), "clients-")), "clients.json");
    writeFileSync(file, JSON.stringify({ clients }));
    return file;
  };
  const serve = (extra: Record<string, string>, args = ["serve", "--http", "--port", "0"]) =>
    spawnSync(process.execPath, [CLI, ...args], {
      env: { ...env(), ...extra },
      encoding: "utf8",
      timeout: 10_000,
      input: "",
    });

  it("a port in use", async () => {
    const shared = await startShared(sandbox, [{ name: "c", token: TOKEN, delegated_user: USER }]);
    try {
      const port = new URL(shared.url).port;
      const result = serve({}, ["serve", "--http", "--port", port]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(
        `portfolio-mcp: port ${port} on 127.0.0.1 is already in use: choose another with --port N, or stop the process that holds it`,
      );
    } finally {
      await shared.stop();
    }
  });

  it("a clients-file entry without its user: the field and the expected shape", () => {
    const file = clientsFile([{ name: "a", token_sha256: sha256Hex(TOKEN) }]);
    const result = serve({ PORTFOLIO_MCP_CLIENTS_FILE: file });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `PORTFOLIO_MCP_CLIENTS_FILE (${file}): clients[0].delegated_user is required; expected { "clients": [ { "name": "…", "token_sha256": "<64 hex>", "delegated_user": { "email": "…" } or { "id": "…" }`,
    );
  });

  it("a clients file and PORTFOLIO_MCP_TOKEN together", () => {
    const file = clientsFile([{ name: "a", token_sha256: sha256Hex(TOKEN), delegated_user: USER }]);
    const result = serve({ PORTFOLIO_MCP_CLIENTS_FILE: file, PORTFOLIO_MCP_TOKEN: TOKEN });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("PORTFOLIO_MCP_TOKEN and PORTFOLIO_MCP_CLIENTS_FILE: set one");
  });

  it("warns of an allowlist that drafts writes nobody can confirm, of typos and of ignored settings", async () => {
    const file = clientsFile([
      {
        name: "drafter",
        token_sha256: sha256Hex(TOKEN),
        delegated_user: USER,
        tools: ["create_custom_dashboard"],
      },
    ]);
    const shared = await startShared(
      sandbox,
      [{ name: "drafter", token: TOKEN, delegated_user: USER, tools: ["create_custom_dashboard"] }],
      { PORTFOLIO_DELEGATED_USER_MAIL: "x@example.com" },
    );
    try {
      const stderr = await shared.stderr();
      expect(stderr).toContain(
        "client drafter may draft writes (create_custom_dashboard) but its tools lack confirm_write and cancel_write",
      );
      expect(stderr).toContain(
        "PORTFOLIO_DELEGATED_USER_MAIL is not a setting of this server; did you mean PORTFOLIO_DELEGATED_USER_EMAIL?",
      );
    } finally {
      await shared.stop();
    }
    // Over stdio the HTTP settings are ignored, and it says so.
    const stdio = serve({ PORTFOLIO_MCP_CLIENTS_FILE: file, PORTFOLIO_LOG_LEVEL: "warn" }, []);
    expect(stdio.stderr).toContain(
      "PORTFOLIO_MCP_CLIENTS_FILE apply to serve --http only; over stdio they are ignored",
    );
  });
});
