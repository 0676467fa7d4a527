import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

let operationId: string;

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false });
beforeAll(async () => {
  await env.client.token();
  operationId = env.data.operations[10]!.id;
});
afterEach(() => env.sandbox.control.clearFaults());

describe("fault injection (programmatic control only)", () => {
  it("fails the next N matching requests with a status, then serves normally", async () => {
    env.sandbox.control.failNext(2, 503, { match: { routeId: "deals_list" } });
    expect((await env.client.get("/operations")).status).toBe(200); // another route is untouched
    const first = await env.client.get("/deals");
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({
      status: 503,
      reason_code: "injected_fault",
      route_id: "deals_list",
    });
    expect((await env.client.get("/deals")).status).toBe(503);
    expect((await env.client.get("/deals")).status).toBe(200);
  });

  it("forces 429 with a given Retry-After", async () => {
    env.sandbox.control.rateLimitNext(1, 7);
    const reply = await env.client.get("/taxonomies");
    expect(reply.status).toBe(429);
    expect(reply.headers.get("retry-after")).toBe("7");
  });

  it("delays responses", async () => {
    env.sandbox.control.delay(300, { count: 1 });
    const started = performance.now();
    expect((await env.client.get("/taxonomies")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it("drops a connection before the route runs: nothing applied", async () => {
    const before = env.data.notes.length;
    env.sandbox.control.dropNext(1, { kind: "write" });
    await expect(
      env.client.write("POST", `/operations/${operationId}/notes`, { content: "lost" }),
    ).rejects.toThrow();
    expect(env.data.notes.length).toBe(before);
    expect(env.sandbox.control.requests().at(-1)).toMatchObject({
      routeId: "operation_note_create",
      status: null,
    });
  });

  it("applies a write then drops the connection: the uncertain outcome", async () => {
    const before = env.data.dashboards.length;
    env.sandbox.control.dropAfterApply(1);
    await expect(
      env.client.write("POST", "/users/me/custom-dashboards", { name: "Appliqué" }),
    ).rejects.toThrow();
    expect(env.data.dashboards.length).toBe(before + 1);
  });

  it("applies probabilistic faults deterministically at the extremes", async () => {
    env.sandbox.control.addFault({ probability: 0, action: { type: "status", status: 500 } });
    expect((await env.client.get("/taxonomies")).status).toBe(200);
    env.sandbox.control.clearFaults();
    env.sandbox.control.addFault({
      probability: 1,
      count: 1,
      match: { kind: "read", method: "GET" },
      action: { type: "status", status: 500 },
    });
    expect((await env.client.get("/taxonomies")).status).toBe(500);
  });

  it("can hit the token exchange", async () => {
    env.sandbox.control.failNext(1, 503, { match: { kind: "exchange" } });
    const fresh = PartnerTestClient.for(env.sandbox);
    expect((await fresh.exchange()).status).toBe(503);
    expect((await fresh.exchange()).status).toBe(200);
  });

  it("expires every bearer now", async () => {
    const fresh = PartnerTestClient.for(env.sandbox);
    await fresh.token();
    env.sandbox.control.expireAllBearers();
    expect((await fresh.get("/taxonomies")).status).toBe(401);
    expect((await env.client.get("/taxonomies")).status).toBe(401);
    env.client.forgetToken(); // every bearer went, the shared client's too
  });

  it("is not reachable over HTTP", async () => {
    for (const path of ["/control", "/_control/faults", "/admin"]) {
      expect((await env.client.call("POST", path, { body: {} })).status).toBe(404);
    }
  });
});

describe("request log", () => {
  it("records method, raw path, query, lower-case headers, body, route, key and status", async () => {
    const mark = env.sandbox.control.mark();
    await env.client.write(
      "POST",
      `/operations/${operationId}/notes`,
      { content: "logged" },
      {
        idempotencyKey: "log-1",
        headers: { "X-Request-ID": "log-req-1" },
      },
    );
    await env.client.get("/operations", { query: { status: "active", limit: 3 } });
    const entries = env.sandbox.control.requests({ since: mark });
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({
      method: "POST",
      path: `/v1/operations/${operationId}/notes`,
      routeId: "operation_note_create",
      keyId: "sandboxdemo",
      status: 201,
      body: { content: "logged" },
    });
    expect(entries[0]!.headers["idempotency-key"]).toBe("log-1");
    expect(entries[0]!.headers["x-request-id"]).toBe("log-req-1");
    expect(entries[1]).toMatchObject({
      method: "GET",
      query: { status: "active", limit: "3" },
      status: 200,
    });
    expect(env.sandbox.control.requests({ routeId: "operations_list", since: mark })).toHaveLength(
      1,
    );
    expect(env.sandbox.control.stats().requests).toBeGreaterThanOrEqual(mark + 2);
  });
});
