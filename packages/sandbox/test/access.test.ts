import { beforeAll, describe, expect, it } from "vitest";
import { DEMO_KEYS } from "../src/index.js";
import { PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

let full: PartnerTestClient;
let readOnly: PartnerTestClient;
let limited: PartnerTestClient;
let operationId: string;

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({
  keys: [
    ...Object.values(DEMO_KEYS).map((k) => structuredClone(k)),
    {
      keyId: "wildops",
      secret: "wild-secret",
      label: "wildcard",
      scopes: ["operations:*"],
      capabilities: [],
      delegatedUsers: [],
    },
    {
      keyId: "starkey",
      secret: "star-secret",
      label: "everything",
      scopes: ["*"],
      capabilities: [],
      delegatedUsers: [],
    },
  ],
});
beforeAll(() => {
  full = PartnerTestClient.for(env.sandbox);
  readOnly = PartnerTestClient.for(env.sandbox, DEMO_KEYS.readOnly);
  limited = PartnerTestClient.for(env.sandbox, DEMO_KEYS.limited);
  operationId = env.data.operations[0]!.id;
});

describe("scopes, route and IP restrictions (spec part 5, authorisation)", () => {
  it("lets a read-only key read but refuses its writes with 403, scope and route_id", async () => {
    expect((await readOnly.get(`/operations/${operationId}`)).status).toBe(200);
    const write = await readOnly.write("POST", `/operations/${operationId}/notes`, {
      content: "hello",
    });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({
      status: 403,
      reason_code: "insufficient_scope",
      scope: "operations:write",
      route_id: "operation_note_create",
    });
  });

  it("decides by scope, not by verb: the preview POST is a read, the workflow POST a write", async () => {
    const preview = await readOnly.call("POST", "/workflows/recommendations/preview", { body: {} });
    expect(preview.status).toBe(200);
    const recommendation = env.data.recommendations.find((r) => r.status === "validated")!;
    const create = await readOnly.write(
      "POST",
      `/workflows/recommendations/${recommendation.id}/workflow`,
      {},
    );
    expect(create.status).toBe(403);
    expect(create.body.scope).toBe("workflows:write");
  });

  it("refuses routes outside a key's route allowlist", async () => {
    expect((await limited.get("/operations")).status).toBe(200);
    const deals = await limited.get("/deals");
    expect(deals.status).toBe(403);
    expect(deals.body).toMatchObject({ reason_code: "route_not_allowed", route_id: "deals_list" });
    // In scope but not in the allowlist: the route restriction alone refuses it.
    const operation = await limited.get(`/operations/${operationId}`);
    expect(operation.body).toMatchObject({
      reason_code: "route_not_allowed",
      route_id: "operation_get",
    });
  });

  it("honours family wildcards and the global wildcard", async () => {
    const wild = new PartnerTestClient(env.sandbox.baseUrl, {
      keyId: "wildops",
      secret: "wild-secret",
    });
    expect((await wild.get("/operations")).status).toBe(200);
    expect(
      (await wild.write("POST", `/operations/${operationId}/notes`, { content: "via wildcard" }))
        .status,
    ).toBe(201);
    const deals = await wild.get("/deals");
    expect(deals.body).toMatchObject({ reason_code: "insufficient_scope", scope: "deals:read" });
    const star = new PartnerTestClient(env.sandbox.baseUrl, {
      keyId: "starkey",
      secret: "star-secret",
    });
    expect((await star.get("/deals")).status).toBe(200);
  });

  it("refuses a bearer used from an address outside the key's IP allowlist", async () => {
    const token = await readOnly.token();
    env.sandbox.control.updateKey(DEMO_KEYS.readOnly.keyId, { ips: ["10.0.0.0/8", "192.168.1.7"] });
    try {
      const refused = await readOnly.get("/taxonomies", { bearer: token });
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({
        reason_code: "ip_not_allowed",
        route_id: "taxonomies_get",
      });
      env.sandbox.control.updateKey(DEMO_KEYS.readOnly.keyId, { ips: ["127.0.0.0/8"] });
      expect((await readOnly.get("/taxonomies", { bearer: token })).status).toBe(200);
    } finally {
      env.sandbox.control.updateKey(DEMO_KEYS.readOnly.keyId, { ips: undefined });
    }
  });
});

describe("problem details (spec part 7)", () => {
  it("echoes X-Request-ID in the problem and the response header", async () => {
    const reply = await full.get("/operations/not-a-uuid", {
      headers: { "x-request-id": "trace-123" },
    });
    expect(reply.status).toBe(422);
    expect(reply.headers.get("x-request-id")).toBe("trace-123");
    expect(reply.headers.get("content-type")).toContain("application/problem+json");
    expect(reply.body).toMatchObject({
      type: "about:blank",
      title: "Unprocessable Entity",
      status: 422,
      request_id: "trace-123",
      route_id: "operation_get",
    });
    expect(reply.body.detail).toContain("operation_id");
  });

  it("generates a request id when the caller sends none", async () => {
    const reply = await full.get("/deals/00000000-0000-4000-8000-000000000000");
    expect(reply.status).toBe(404);
    expect(reply.body.request_id).toMatch(/^req_/);
    expect(reply.headers.get("x-request-id")).toBe(reply.body.request_id);
  });

  it("answers unknown paths with 404 and wrong methods with 405 and Allow", async () => {
    const unknown = await full.get("/nowhere");
    expect(unknown.status).toBe(404);
    expect(unknown.body.reason_code).toBe("route_not_found");
    const outside = await fetch(env.sandbox.baseUrl.replace(/\/v1$/, "/v2/operations"));
    expect(outside.status).toBe(404);
    const wrongMethod = await full.call("DELETE", "/operations");
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET, POST"); // list and creation
  });
});
