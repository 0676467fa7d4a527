import { setTimeout as sleep } from "node:timers/promises";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initializeBody, MCP_HEADERS } from "../helpers/raw.js";
import { startShared } from "../helpers/shared.js";

const TOKEN = "limits-token-0123456789abcdef";
const USER = { email: "camille.martin@aurore-capital.example" };
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

describe("limits and lifecycle", () => {
  it("refuses foreign Host and Origin (403), oversize bodies (413), bad JSON (400), wrong methods (405), unknown sessions (404)", async () => {
    const shared = await startShared(sandbox, [{ name: "c", token: TOKEN, delegated_user: USER }], {
      PORTFOLIO_MCP_MAX_BODY_BYTES: "2048",
    });
    try {
      const auth = { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` };
      expect(
        (await shared.raw("POST", "/mcp", { ...auth, host: "evil.example:80" }, initializeBody))
          .status,
      ).toBe(403);
      expect(
        (
          await shared.raw(
            "POST",
            "/mcp",
            { ...auth, origin: "https://evil.example" },
            initializeBody,
          )
        ).status,
      ).toBe(403);
      expect(
        (await shared.raw("POST", "/mcp", auth, JSON.stringify({ pad: "x".repeat(4096) }))).status,
      ).toBe(413);
      const bad = await shared.raw("POST", "/mcp", auth, "{nope");
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body).error.code).toBe(-32700);
      expect((await shared.raw("PUT", "/mcp", auth, "{}")).status).toBe(405);
      const unknown = await shared.raw(
        "POST",
        "/mcp",
        { ...auth, "mcp-session-id": "no-such-session" },
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
      );
      expect(unknown.status).toBe(404);
    } finally {
      await shared.stop();
    }
  });

  it("bounds concurrent sessions (503 with Retry-After) and each client's rate (429 with Retry-After)", async () => {
    const shared = await startShared(sandbox, [{ name: "c", token: TOKEN, delegated_user: USER }], {
      PORTFOLIO_MCP_MAX_SESSIONS: "2",
      PORTFOLIO_MCP_RATE_LIMIT_PER_MINUTE: "12",
    });
    try {
      const a = await shared.connect(TOKEN);
      const b = await shared.connect(TOKEN);
      const third = await shared.raw(
        "POST",
        "/mcp",
        { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
        initializeBody,
      );
      expect(third.status).toBe(503);
      expect(third.headers["retry-after"]).toBe("30");
      let limited: { status: number; headers: Record<string, unknown> } | undefined;
      for (let i = 0; i < 20 && !limited; i++) {
        const reply = await shared.raw(
          "POST",
          "/mcp",
          {
            ...MCP_HEADERS,
            authorization: `Bearer ${TOKEN}`,
            "mcp-session-id": a.transport.sessionId!,
            "mcp-protocol-version": "2025-06-18",
          },
          JSON.stringify({ jsonrpc: "2.0", id: i, method: "ping" }),
        );
        if (reply.status === 429) limited = reply;
      }
      expect(limited?.status).toBe(429);
      expect(Number(limited?.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      await a.client.close();
      await b.client.close();
    } finally {
      await shared.stop();
    }
  });

  it("closes idle sessions, transport and server both", async () => {
    const shared = await startShared(sandbox, [{ name: "c", token: TOKEN, delegated_user: USER }], {
      PORTFOLIO_MCP_SESSION_IDLE_SECONDS: "1",
    });
    try {
      const session = await shared.connect(TOKEN);
      expect((await session.client.listTools()).tools.length).toBeGreaterThan(0);
      await sleep(2_600);
      const after = await shared.raw(
        "POST",
        "/mcp",
        {
          ...MCP_HEADERS,
          authorization: `Bearer ${TOKEN}`,
          "mcp-session-id": session.transport.sessionId!,
          "mcp-protocol-version": "2025-06-18",
        },
        JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }),
      );
      expect(after.status).toBe(404);
      expect((await shared.raw("GET", "/metrics")).body).toMatch(/portfolio_mcp_sessions_open 0/);
    } finally {
      await shared.stop();
    }
  });

  it("in stateless mode, answers JSON without sessions and confirms writes in two steps", async () => {
    const shared = await startShared(
      sandbox,
      [{ name: "c", token: TOKEN, delegated_user: USER }],
      { PORTFOLIO_CONFIRM: "auto" },
      ["--stateless"],
    );
    try {
      const auth = {
        ...MCP_HEADERS,
        authorization: `Bearer ${TOKEN}`,
        "mcp-protocol-version": "2025-06-18",
      };
      const init = await shared.raw("POST", "/mcp", auth, initializeBody);
      expect(init.status).toBe(200);
      expect(init.headers["content-type"]).toContain("application/json");
      expect(init.headers["mcp-session-id"]).toBeUndefined();
      // No session, so no standing event stream to open.
      const stream = await shared.raw("GET", "/mcp", { ...auth, accept: "text/event-stream" });
      expect(stream.status).toBe(405);
      expect(stream.headers.allow).toBe("POST");
      const call = (id: number, name: string, args: object) =>
        shared
          .raw(
            "POST",
            "/mcp",
            auth,
            JSON.stringify({
              jsonrpc: "2.0",
              id,
              method: "tools/call",
              params: { name, arguments: args },
            }),
          )
          .then((r) => JSON.parse(r.body).result);
      const list = await call(2, "list_operations", { status: "active", limit: 2 });
      expect(list.structuredContent.total).toBe(54);
      const draft = await call(3, "create_custom_dashboard", { name: "Sans session" });
      expect(draft.structuredContent.status).toBe("awaiting_confirmation");
      const done = await call(4, "confirm_write", {
        confirmation_id: draft.structuredContent.confirmation_id,
      });
      expect(done.structuredContent.status).toBe("succeeded");
      expect(
        sandbox.control.state.data.dashboards.filter((d) => d.name === "Sans session"),
      ).toHaveLength(1);
    } finally {
      await shared.stop();
    }
  });

  it("is live but not ready while the Partner API refuses its token exchange", async () => {
    const shared = await startShared(sandbox, [{ name: "c", token: TOKEN, delegated_user: USER }], {
      PORTFOLIO_API_SECRET: "a-secret-the-sandbox-does-not-know",
    });
    try {
      expect((await shared.raw("GET", "/healthz")).status).toBe(200);
      const exchanges = sandbox.control.stats().tokenExchanges;
      const probes = await Promise.all(
        Array.from({ length: 50 }, () => shared.raw("GET", "/readyz")),
      );
      for (const ready of probes) {
        expect(ready.status).toBe(503);
        // What failed and what to check, never the secret itself.
        expect(JSON.parse(ready.body)).toEqual({
          status: "not ready",
          reason: expect.stringMatching(
            /^The Partner API refused to sign this server in \(invalid_signature\): check PORTFOLIO_API_KEY_ID, PORTFOLIO_API_SECRET and this machine's clock \(request \S+\)\.$/,
          ),
        });
        expect(ready.body).not.toContain("a-secret");
      }
      // Probes share one verdict and back off: they do not each become a signed exchange.
      expect(sandbox.control.stats().tokenExchanges - exchanges).toBeLessThanOrEqual(2);
    } finally {
      await shared.stop();
    }
  });

  it("on SIGTERM, stops accepting, lets the call in flight finish, and exits 0", async () => {
    const shared = await startShared(sandbox, [{ name: "c", token: TOKEN, delegated_user: USER }]);
    const session = await shared.connect(TOKEN);
    sandbox.control.delay(1_200, { count: 1, match: { routeId: "deals_list" } });
    const inFlight = session.client.callTool({ name: "list_deals", arguments: { limit: 1 } });
    await sleep(300);
    const exit = shared.stop("SIGTERM");
    const reply = (await inFlight) as unknown as { structuredContent: { total: number } };
    expect(reply.structuredContent.total).toBe(25);
    expect(await exit).toBe(0);
  });
});
