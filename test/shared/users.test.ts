import { DEMO_KEYS, DEMO_USERS, type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initializeBody, MCP_HEADERS } from "../helpers/raw.js";
import { startShared } from "../helpers/shared.js";

const CAMILLE = "camille-token-0123456789abcdef";
const THOMAS = "thomas-token-0123456789abcdef";
const READER = "reader-token-0123456789abcdef";

let sandbox: Sandbox;
let shared: Awaited<ReturnType<typeof startShared>>;

beforeAll(async () => {
  // Thomas joins the key's allowlist here, so that two users can write.
  sandbox = await startSandbox({
    rateLimit: false,
    keys: [
      {
        ...structuredClone(DEMO_KEYS.full),
        delegatedUsers: [DEMO_USERS.camille, DEMO_USERS.thomas],
      },
    ],
  });
  shared = await startShared(sandbox, [
    {
      name: "camille",
      token: CAMILLE,
      delegated_user: { email: "camille.martin@aurore-capital.example" },
    },
    { name: "thomas", token: THOMAS, delegated_user: { id: DEMO_USERS.thomas } },
    {
      name: "reader",
      token: READER,
      delegated_user: { email: "camille.martin@aurore-capital.example" },
      read_only: true,
      tools: ["list_operations", "list_my_dashboards"],
    },
  ]);
});
afterAll(async () => {
  await shared.stop();
  await sandbox.close();
});

type Reply = { structuredContent: any; isError?: boolean; content: any[] };

describe("many users on one server", () => {
  it("shows each user their own views and dashboards, and sends each one's writes as them", async () => {
    const camille = await shared.connect(CAMILLE);
    const thomas = await shared.connect(THOMAS);
    try {
      const call = async (c: typeof camille, name: string, args: object = {}) =>
        (await c.client.callTool({ name, arguments: args as Record<string, unknown> })) as Reply;
      const [camilleViews, thomasViews] = await Promise.all([
        call(camille, "list_my_saved_views"),
        call(thomas, "list_my_saved_views"),
      ]);
      expect(camilleViews.structuredContent.total).toBe(3);
      expect(thomasViews.structuredContent.total).toBe(0);

      const mark = sandbox.control.mark();
      for (const [session, name] of [
        [camille, "Tableau de Camille"],
        [thomas, "Tableau de Thomas"],
      ] as const) {
        const draft = await call(session, "create_custom_dashboard", { name });
        expect(draft.structuredContent.preview.recorded_as).toBe(
          `${session === camille ? "camille.martin@aurore-capital.example" : `user id ${DEMO_USERS.thomas}`} (the user this server acts for)`,
        );
        const done = await call(session, "confirm_write", {
          confirmation_id: draft.structuredContent.confirmation_id,
        });
        expect(done.structuredContent.status).toBe("succeeded");
      }
      const writes = sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" });
      expect(
        writes.map((e) => [
          e.body && (e.body as { name: string }).name,
          e.headers["x-service-delegated-user-email"],
          e.headers["x-service-delegated-user-id"],
        ]),
      ).toEqual([
        ["Tableau de Camille", "camille.martin@aurore-capital.example", undefined],
        ["Tableau de Thomas", undefined, DEMO_USERS.thomas],
      ]);
      const camilleDashboards = (
        await call(camille, "list_my_dashboards")
      ).structuredContent.items.map((d: { name: string }) => d.name);
      const thomasDashboards = (
        await call(thomas, "list_my_dashboards")
      ).structuredContent.items.map((d: { name: string }) => d.name);
      expect(camilleDashboards).toContain("Tableau de Camille");
      expect(camilleDashboards).not.toContain("Tableau de Thomas");
      expect(thomasDashboards).toEqual(["Tableau de Thomas"]);

      // One user cannot confirm another's intent.
      const draft = await call(camille, "create_custom_dashboard", { name: "Pas pour Thomas" });
      const stolen = await call(thomas, "confirm_write", {
        confirmation_id: draft.structuredContent.confirmation_id,
      });
      expect(stolen.isError).toBe(true);
      expect(stolen.content[0].text).toContain("drafted by another client or for another user");
    } finally {
      await camille.client.close();
      await thomas.client.close();
    }
  });

  it("binds a session to the token that opened it", async () => {
    const camille = await shared.connect(CAMILLE);
    try {
      const sessionId = camille.transport.sessionId!;
      const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" });
      const hijack = await shared.raw(
        "POST",
        "/mcp",
        {
          ...MCP_HEADERS,
          authorization: `Bearer ${THOMAS}`,
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        body,
      );
      expect(hijack.status).toBe(403);
      const own = await shared.raw(
        "POST",
        "/mcp",
        {
          ...MCP_HEADERS,
          authorization: `Bearer ${CAMILLE}`,
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-06-18",
        },
        body,
      );
      expect(own.status).toBe(200);
    } finally {
      await camille.client.close();
    }
  });

  it("gives a read-only client with a tool allowlist only those read tools", async () => {
    const reader = await shared.connect(READER);
    try {
      const names = (await reader.client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(["list_my_dashboards", "list_operations"]);
      await expect(reader.client.callTool({ name: "list_deals", arguments: {} })).rejects.toThrow(
        "Tool list_deals is not offered here: it is outside this client's allowlist.",
      );
      await expect(
        reader.client.callTool({ name: "create_custom_dashboard", arguments: { name: "x" } }),
      ).rejects.toThrow(
        "Tool create_custom_dashboard is not offered here: it writes, and this server is read-only.",
      );
    } finally {
      await reader.client.close();
    }
  });

  it("refuses a wrong or missing token with 401 and WWW-Authenticate, naming no token", async () => {
    for (const authorization of [undefined, "Bearer nope-nope-nope-nope", `Bearer ${CAMILLE}x`]) {
      const reply = await shared.raw(
        "POST",
        "/mcp",
        { ...MCP_HEADERS, ...(authorization ? { authorization } : {}) },
        initializeBody,
      );
      expect(reply.status).toBe(401);
      expect(reply.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(reply.body).not.toContain("token-0123");
    }
  });

  it("serves health, readiness and metrics", async () => {
    expect((await shared.raw("GET", "/healthz")).status).toBe(200);
    const ready = await shared.raw("GET", "/readyz");
    expect(ready.status).toBe(200);
    const metrics = await shared.raw("GET", "/metrics");
    expect(metrics.status).toBe(200);
    for (const name of [
      "portfolio_mcp_http_requests_total",
      "portfolio_mcp_upstream_calls_total",
      "portfolio_mcp_token_exchanges_total",
      "portfolio_mcp_sessions_open",
      "portfolio_mcp_intents_pending",
      "portfolio_mcp_intents_quarantined",
    ]) {
      expect(metrics.body).toContain(name);
    }
    expect(metrics.body).toMatch(
      /portfolio_mcp_upstream_calls_total\{operation="custom_dashboard_create",status="201"\} 2/,
    );
    expect(metrics.body).toMatch(/^process_resident_memory_bytes [1-9]\d{6,}$/m);
    expect(metrics.body).toMatch(/^nodejs_heap_used_bytes [1-9]\d{5,}$/m);
    expect(metrics.body).toMatch(/^# TYPE process_cpu_seconds_total counter$/m);
    expect(metrics.body).toMatch(/^portfolio_mcp_token_exchanges_total [1-9]\d*$/m);
    expect(metrics.body).not.toMatch(/camille|thomas|token-0123/i);
  });
});
