import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import { asListPage } from "../../src/api/response.js";
import { resolveRoutes } from "../../src/api/routes.js";
import type { ApiSettings } from "../../src/config.js";
import { ApiError } from "../../src/http/errors.js";
import { clientFor } from "../helpers/api.js";

let sandbox: Sandbox;
let operationId: string;
const clients: ApiClient[] = [];
const client = (
  overrides: Partial<ApiSettings> = {},
  options: Parameters<typeof clientFor>[2] = {},
) => {
  const made = clientFor(sandbox, overrides, options);
  clients.push(made.api);
  return made;
};
const fail = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error as ApiError,
  );
const noSleep = { sleep: async () => {} };

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  operationId = sandbox.control.state.data.operations[12]!.id;
});
afterEach(async () => {
  sandbox.control.clearFaults();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(() => sandbox.close());

describe("requests", () => {
  it("sends X-Request-ID on every request, the caller's or a generated one", async () => {
    const { api } = client();
    const mark = sandbox.control.mark();
    const mine = await api.call("taxonomies_get", {}, { requestId: "trace-42" });
    const generated = await api.call("taxonomies_get", {});
    expect(mine.requestId).toBe("trace-42");
    expect(generated.requestId).toMatch(/^pmcp-[0-9a-f-]{36}$/);
    const sent = sandbox.control.requests({ since: mark, routeId: "taxonomies_get" });
    expect(sent.map((e) => e.headers["x-request-id"])).toEqual(["trace-42", generated.requestId]);
  });

  it("puts an Idempotency-Key on every non-GET request, reads included", async () => {
    const { api } = client();
    const mark = sandbox.control.mark();
    await api.call("workflow_recommendations_preview", {});
    await api.call(
      "operation_note_create",
      { path: { operation_id: operationId }, body: { content: "clé" } },
      { idempotencyKey: "mine-1" },
    );
    await api.call("deals_list", {});
    const [preview, note, deals] = sandbox.control
      .requests({ since: mark })
      .filter((e) => e.routeId !== "auth_token");
    expect(preview!.headers["idempotency-key"]).toMatch(/^pmcp-/);
    expect(note!.headers["idempotency-key"]).toBe("mine-1");
    expect(deals!.headers).not.toHaveProperty("idempotency-key");
  });

  it("builds paths and queries from validated input, encoding values", async () => {
    const { api } = client();
    const mark = sandbox.control.mark();
    const page = await api.call("operations_list", {
      query: { status: "active", limit: 5, name: undefined },
    });
    expect(asListPage(page.data).items).toHaveLength(5);
    await api.call("siren_validate", { path: { siren: "12 34/56" } });
    const [list, validate] = sandbox.control
      .requests({ since: mark })
      .filter((e) => e.routeId !== "auth_token");
    expect(list!.query).toEqual({ status: "active", limit: "5" });
    expect(validate!.path).toBe("/v1/enrichment/siren/12%2034%2F56/validate");
  });

  it("keeps decimal strings as strings", async () => {
    const { api } = client();
    const { data } = await api.call("operation_get", { path: { operation_id: operationId } });
    const detail = data as {
      financial_summary: Record<string, unknown>;
      kpi_snapshot: Record<string, unknown>;
    };
    expect(typeof detail.financial_summary.montant_engage).toBe("string");
    expect(detail.financial_summary.montant_engage).toMatch(/^\d+\.\d{2}$/);
  });

  it("hands back the INREV workbook as checked bytes", async () => {
    const { api } = client();
    const { data, contentType } = await api.call("reports_inrev", {});
    expect(Buffer.isBuffer(data)).toBe(true);
    expect((data as Buffer).subarray(0, 2).toString()).toBe("PK");
    expect(contentType).toContain("spreadsheetml");
  });

  it("refuses a workbook answer with the wrong content type", async () => {
    const { api } = client();
    sandbox.control.addFault({
      count: 1,
      match: { routeId: "reports_inrev" },
      action: { type: "status", status: 200, body: "<html>login</html>", contentType: "text/html" },
    });
    const error = await fail(api.call("reports_inrev", {}));
    expect(error).toMatchObject({ code: "unexpected_response", operationId: "reports_inrev" });
    expect(error.message).toContain("text/html");
  });

  it("cancels an in-flight request from the caller's AbortSignal", async () => {
    const { api } = client();
    await api.call("taxonomies_get", {});
    sandbox.control.delay(3_000, { count: 1, match: { routeId: "deals_list" } });
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 100);
    const error = await fail(api.call("deals_list", {}, { signal: controller.signal }));
    expect(error.code).toBe("aborted");
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it("times out a request that gets no answer, retries it, then gives up", async () => {
    const { api } = client({ timeoutMs: 300, maxRetries: 1 }, noSleep);
    await api.call("taxonomies_get", {});
    sandbox.control.delay(1_500, { count: 2, match: { routeId: "deals_list" } });
    const error = await fail(api.call("deals_list", {}, { requestId: "slow-deals" }));
    expect(error.code).toBe("timeout");
    await new Promise((r) => setTimeout(r, 1_600)); // the sandbox logs a request when it has answered
    const attempts = sandbox.control
      .requests({ routeId: "deals_list" })
      .filter((e) => e.headers["x-request-id"] === "slow-deals");
    expect(attempts).toHaveLength(2);
  });
});

describe("input validation before sending", () => {
  it.each([
    ["operations_list", { query: { limit: 500 } }, "limit", "max 200"],
    ["operations_list", { query: { spv_id: "../deals" } }, "spv_id", "pattern"],
    ["operations_list", { query: { colour: "red" } }, "colour", "unknown field"],
    ["operation_get", { path: { operation_id: "../../deals" } }, "operation_id", "pattern"],
    ["operators_list", { query: { name: "A", search: "B" } }, "search", "cannot be combined"],
    ["deals_list", { query: { status: "won" } }, "status", "one of sourcing"],
    [
      "operation_note_create",
      { path: { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031" }, body: { content: "" } },
      "content",
      "min length 1",
    ],
    [
      "operation_note_create",
      {
        path: { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031" },
        body: { category: "c".repeat(81) },
      },
      "category",
      "max length 80",
    ],
    [
      "custom_dashboard_create",
      { body: { name: "x", layout: Array.from({ length: 51 }, () => ({})) } },
      "layout",
      "max 50 items",
    ],
    [
      "saved_view_create",
      { body: { name: "v", type: "operations", filters: { status: "x" } } },
      "filters.status",
      "use statut",
    ],
    [
      "saved_view_create",
      { body: { name: "v", type: "operations", filters: { big: "x".repeat(16_400) } } },
      "filters",
      "16384 bytes",
    ],
    ["saved_view_create", { body: { name: "  ", type: "operations" } }, "name", "not be blank"],
    [
      "saved_view_create",
      { body: { name: "v", type: "operations", icon: "rocket" } },
      "icon",
      "one of star",
    ],
    ["saved_view_create", { body: { name: "v", type: "agenda" } }, "type", "one of operations"],
    [
      "saved_view_create",
      { body: { name: "v", type: "deals", columns: ["name", "statut"] } },
      "columns[1]",
      "column of deals views",
    ],
    ["siren_validate", { path: { siren: ".." } }, "siren", "dot segment"],
    ["siren_get", { path: { siren: "1234" } }, "siren", "pattern"],
    ["taxonomies_get", { query: { all: true } }, "query", "not accepted"],
  ] as const)(
    "%s with %j is refused on %s, and nothing is sent",
    async (id, input, field, rule) => {
      const { api } = client();
      const mark = sandbox.control.mark();
      const error = await fail(api.call(id as "operations_list", input as never));
      expect(error.code).toBe("invalid_input");
      expect(error.fieldErrors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field, rule: expect.stringContaining(rule) }),
        ]),
      );
      expect(error.message).toContain(field);
      expect(error.message).toContain("nothing was sent");
      expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
    },
  );
});

describe("retries", () => {
  it("retries a read on 502, 503 and 504, then succeeds", async () => {
    const { api } = client({}, noSleep);
    await api.call("taxonomies_get", {});
    sandbox.control.failNext(1, 502, { match: { routeId: "deals_list" } });
    sandbox.control.failNext(1, 503, { match: { routeId: "deals_list" } });
    sandbox.control.failNext(1, 504, { match: { routeId: "deals_list" } });
    const result = await api.call("deals_list", {});
    expect(result.status).toBe(200);
    expect(result.attempts).toBe(4);
  });

  it("stops after the retry budget and reports the last answer", async () => {
    const { api } = client({ maxRetries: 2 }, noSleep);
    sandbox.control.failNext(5, 503, { match: { routeId: "deals_list" } });
    const mark = sandbox.control.mark();
    const error = await fail(api.call("deals_list", {}));
    expect(error).toMatchObject({
      code: "server_error",
      status: 503,
      reasonCode: "injected_fault",
    });
    expect(sandbox.control.requests({ since: mark, routeId: "deals_list" })).toHaveLength(3);
  });

  it("never retries a 500, a 4xx or a write's 500", async () => {
    const { api } = client({}, noSleep);
    sandbox.control.failNext(1, 500, { match: { routeId: "deals_list" } });
    expect((await fail(api.call("deals_list", {}))).status).toBe(500);
    sandbox.control.failNext(1, 500, { match: { routeId: "custom_dashboard_create" } });
    const mark = sandbox.control.mark();
    expect((await fail(api.call("custom_dashboard_create", { body: { name: "x" } }))).code).toBe(
      "server_error",
    );
    expect(
      sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" }),
    ).toHaveLength(1);
  });

  it("retries a write with the same Idempotency-Key and applies it once", async () => {
    const { api } = client({}, noSleep);
    const before = sandbox.control.state.data.notes.length;
    sandbox.control.failNext(2, 503, { match: { routeId: "operation_note_create" } });
    const mark = sandbox.control.mark();
    const result = await api.call("operation_note_create", {
      path: { operation_id: operationId },
      body: { content: "retried" },
    });
    expect(result.status).toBe(201);
    const attempts = sandbox.control.requests({ since: mark, routeId: "operation_note_create" });
    expect(attempts.map((e) => e.status)).toEqual([503, 503, 201]);
    expect(new Set(attempts.map((e) => e.headers["idempotency-key"])).size).toBe(1);
    expect(sandbox.control.state.data.notes.length).toBe(before + 1);
  });

  it("retries a write whose connection dropped after it was applied: exactly one record", async () => {
    const { api } = client({}, noSleep);
    const before = sandbox.control.state.data.dashboards.length;
    sandbox.control.dropAfterApply(1, { routeId: "custom_dashboard_create" });
    const mark = sandbox.control.mark();
    const result = await api.call("custom_dashboard_create", { body: { name: "Suivi hebdo" } });
    expect(result.status).toBe(201);
    const attempts = sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" });
    expect(attempts.map((e) => e.status)).toEqual([null, 201]);
    expect(attempts[0]!.headers["idempotency-key"]).toBe(attempts[1]!.headers["idempotency-key"]);
    expect(sandbox.control.state.data.dashboards.length).toBe(before + 1);
    expect((result.data as { id: string }).id).toBe(
      sandbox.control.state.data.dashboards.at(-1)!.id,
    );
  });

  it("waits out a 429's Retry-After in a cooldown shared by every call, sending nothing meanwhile", async () => {
    const { api } = client();
    await api.call("taxonomies_get", {});
    sandbox.control.rateLimitNext(1, 2);
    const mark = sandbox.control.mark();
    const started = Date.now();
    const first = api.call("deals_list", {});
    await new Promise((r) => setTimeout(r, 200)); // the 429 has arrived; now others call too
    const others = Promise.all(Array.from({ length: 10 }, () => api.call("taxonomies_get", {})));
    const [result] = await Promise.all([first, others]);
    expect(result.status).toBe(200);
    const log = sandbox.control.requests({ since: mark });
    expect(log[0]).toMatchObject({ routeId: "deals_list", status: 429 });
    const after = log.slice(1).map((e) => Date.parse(e.at) - Date.parse(log[0]!.at));
    expect(after).toHaveLength(11);
    expect(Math.min(...after)).toBeGreaterThanOrEqual(1_950);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
  });

  it("returns a wait longer than the configured maximum as an error with the time to wait", async () => {
    const { api } = client({ maxRetryWaitSeconds: 5 });
    await api.call("taxonomies_get", {});
    sandbox.control.rateLimitNext(1, 120);
    const error = await fail(api.call("deals_list", {}));
    expect(error).toMatchObject({ code: "rate_limited", retryAfterSeconds: 120 });
    const mark = sandbox.control.mark();
    const next = await fail(api.call("taxonomies_get", {}));
    expect(next.code).toBe("rate_limited");
    expect(next.retryAfterSeconds).toBeGreaterThan(100);
    expect(next.message).toMatch(/retry taxonomies_get in \d+ s/);
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
  });
});

describe("errors", () => {
  it("turns a problem document into a typed ApiError with its fields and the request id", async () => {
    const { api } = client();
    const error = await fail(
      api.call(
        "deal_get",
        { path: { deal_id: "00000000-0000-4000-8000-000000000000" } },
        { requestId: "req-404" },
      ),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: "not_found",
      status: 404,
      reasonCode: "deal_not_found",
      requestId: "req-404",
      routeId: "deal_get",
      operationId: "deal_get",
      title: "Not Found",
    });
    expect(error.message).toContain("deal_not_found");
  });

  it("keeps the scope of a 403 and the fields of an upstream 422", async () => {
    const limited = client({
      keyId: "sandboxreadonly",
      secret: "sandbox-readonly-secret-not-for-production",
    }).api;
    const forbidden = await fail(limited.call("custom_dashboard_create", { body: { name: "x" } }));
    expect(forbidden).toMatchObject({
      code: "forbidden",
      scope: "users:write",
      reasonCode: "insufficient_scope",
    });
    const { api } = client();
    const invalid = await fail(api.call("operations_list", { query: { status: "en_cours" } }));
    expect(invalid).toMatchObject({ code: "invalid_request", status: 422 });
    expect(invalid.fieldErrors?.[0]).toMatchObject({ field: "status" });
  });

  it("gives a clear error for a non-JSON error body", async () => {
    const { api } = client({ maxRetries: 0 });
    sandbox.control.addFault({
      count: 1,
      match: { routeId: "deals_list" },
      action: {
        type: "status",
        status: 502,
        body: "<html><body>Bad gateway</body></html>",
        contentType: "text/html",
      },
    });
    const error = await fail(api.call("deals_list", {}));
    expect(error).toMatchObject({ code: "server_error", status: 502 });
    expect(error.message).toContain("HTTP 502");
    expect(error.message).toContain("Bad gateway");
  });

  it("reports an unreachable API as a network error after its retries", async () => {
    const { api } = client({ baseUrl: "http://127.0.0.1:9/v1", maxRetries: 1 }, noSleep);
    const error = await fail(api.call("taxonomies_get", {}));
    expect(error.code).toBe("network_error");
    expect(error.operationId).toBe("auth_token");
  });
});

describe("delegation", () => {
  it("sends exactly one delegation header, only on /users/me* routes", async () => {
    const { api } = client();
    const mark = sandbox.control.mark();
    await api.call("me_get", {});
    await api.call("saved_views_list", {});
    await api.call("operations_list", {});
    await api.call("custom_dashboard_create", { body: { name: "Délégué" } });
    const prefix = "x-service-delegated-user-";
    for (const entry of sandbox.control.requests({ since: mark })) {
      const delegation = Object.keys(entry.headers).filter((h) => h.startsWith(prefix));
      if (entry.path.startsWith("/v1/users/me"))
        expect(delegation, entry.path).toEqual([`${prefix}email`]);
      else expect(delegation, entry.path).toEqual([]);
    }
  });

  it("acts for a user named by id, or for a per-call user", async () => {
    const { api } = client({ delegatedUser: { id: "usr_julien_bernard" } });
    const me = await api.call("me_get", {});
    expect((me.data as { id: string }).id).toBe("usr_julien_bernard");
    const other = await api.call(
      "me_get",
      {},
      { delegatedUser: { email: "camille.martin@aurore-capital.example" } },
    );
    expect((other.data as { id: string }).id).toBe("usr_camille_martin");
  });

  it("refuses a delegated call without a configured user, sending nothing", async () => {
    const { api } = client({ delegatedUser: null });
    const mark = sandbox.control.mark();
    const error = await fail(api.call("saved_views_list", {}));
    expect(error.code).toBe("not_configured");
    expect(error.message).toContain("PORTFOLIO_DELEGATED_USER_EMAIL");
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
  });
});

describe("route overrides", () => {
  it("calls a route where the routes file moved it", async () => {
    const moved = await startSandbox({
      routePaths: {
        deal_get: "/pipeline/deals/{deal_id}",
        operations_list: "/portfolio/operations",
      },
    });
    const dir = mkdtempSync(join(tmpdir(), "routes-"));
    const file = join(dir, "routes.json");
    writeFileSync(
      file,
      JSON.stringify({
        deal_get: { method: "GET", path: "/pipeline/deals/{deal_id}" },
        operations_list: { method: "GET", path: "/portfolio/operations" },
      }),
    );
    const { api } = clientFor(moved, { routesFile: file });
    try {
      const deal = moved.control.state.data.deals[0]!;
      expect((await api.call("deal_get", { path: { deal_id: deal.id } })).data).toMatchObject({
        id: deal.id,
      });
      expect((await api.call("operations_list", { query: { limit: 1 } })).status).toBe(200);
      const paths = moved.control
        .requests()
        .filter((e) => e.routeId !== "auth_token")
        .map((e) => e.path);
      expect(paths).toEqual([`/v1/pipeline/deals/${deal.id}`, "/v1/portfolio/operations"]);
      expect(resolveRoutes(file).get("deal_get")?.path).toBe("/pipeline/deals/{deal_id}");
    } finally {
      await api.close();
      await moved.close();
    }
  });
});
