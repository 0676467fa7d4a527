import { beforeAll, describe, expect, it } from "vitest";
import { rawRequest } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

let operationId: string;
let viewId: string;

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false });
beforeAll(() => {
  operationId = env.data.operations[3]!.id;
  viewId = env.data.savedViews.find(
    (v) => v.user_id === "usr_camille_martin" && v.type === "operations",
  )!.id;
});

function expectRefusal(reply: { status: number; body: any }, field: string, rule: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(422);
  expect(reply.body.errors).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ field, rule: expect.stringContaining(rule) }),
    ]),
  );
  expect(reply.body.detail).toContain(field);
}

describe("query parameters (spec parts 4 and 8)", () => {
  it.each([
    ["/operations", { limit: 0 }, "limit", "min 1"],
    ["/operations", { limit: 201 }, "limit", "max 200"],
    ["/operations", { limit: "ten" }, "limit", "pattern"],
    ["/operations", { limit: "1.5" }, "limit", "pattern"],
    ["/operations", { offset: -1 }, "offset", "min 0"],
    ["/operations", { name: "n".repeat(256) }, "name", "max length 255"],
    ["/operations", { status: "s".repeat(181) }, "status", "max length 180"],
    ["/operations", { status: "en_cours" }, "status", "one of active"],
    ["/operations", { spv_id: "spv-1" }, "spv_id", "format guid"],
    ["/operations", { colour: "red" }, "colour", "unknown field"],
    ["/calendar/events", { limit: 201 }, "limit", "max 200"],
    ["/calendar/events", { offset: "x" }, "offset", "pattern"],
    ["/deals", { status: "won" }, "status", "one of sourcing"],
    ["/deals", { limit: 500 }, "limit", "max 200"],
    ["/operateurs", { name: "Nordis Promotion", search: "nord" }, "search", "exclusive with name"],
    ["/operateurs", { limit: 0 }, "limit", "min 1"],
    ["/spvs", { name: "x".repeat(256) }, "name", "max length 255"],
    ["/operations/{op}/notes", { limit: 0 }, "limit", "min 1"],
  ])("GET %s refuses %s on %s (%s)", async (path, query, field, rule) => {
    const reply = await env.client.get(path.replace("{op}", operationId), { query });
    expectRefusal(reply, field, rule);
  });

  it("refuses a repeated parameter rather than guessing", async () => {
    const reply = await env.client.get("/operations?limit=1&limit=2");
    expectRefusal(reply, "limit", "single value");
  });

  it("applies the per-route defaults: 50 for operations and deals, 20 for calendar and notes", async () => {
    expect((await env.client.get("/operations")).body.items).toHaveLength(50);
    expect((await env.client.get("/deals", { query: { limit: 200 } })).body.items).toHaveLength(25);
    expect((await env.client.get("/calendar/events")).body.items).toHaveLength(20);
    expect(
      (await env.client.get("/calendar/events", { query: { limit: 200 } })).body.items,
    ).toHaveLength(50);
  });
});

describe("path parameters", () => {
  it.each([
    ["/operations/not-a-uuid", "operation_id"],
    ["/operations/..%2Fdeals", "operation_id"],
    ["/operations/%2e%2e/notes", "operation_id"],
    ["/deals/123", "deal_id"],
    ["/operateurs/%00", "operateur_id"],
    ["/field-definitions/by-key/Surface%20Plancher", "field_key"],
    ["/enrichment/siren/12345678", "siren"],
    ["/users/me/saved-views/not-a-uuid", "view_id"],
  ])("refuses %s with 422 on %s", async (path, field) => {
    const headers = {
      authorization: `Bearer ${await env.client.token()}`,
      "idempotency-key": `raw-${field}`,
      "x-service-delegated-user-email": env.sandbox.credentials.delegatedUserEmail,
    };
    const method = path.startsWith("/users/me/saved-views") ? "PATCH" : "GET";
    const reply = await rawRequest(env.sandbox.baseUrl, method, path, headers);
    expect(reply.status).toBe(422);
    expect(reply.body.errors[0].field).toBe(field);
  });

  it("does not normalise dot segments into another route", async () => {
    const reply = await rawRequest(env.sandbox.baseUrl, "GET", "/operations/../deals", {
      authorization: `Bearer ${await env.client.token()}`,
    });
    expect(reply.status).toBe(404);
    expect(reply.body.reason_code).toBe("route_not_found");
    expect(env.sandbox.control.requests().at(-1)?.path).toBe("/v1/operations/../deals");
  });

  it("answers 404 for well-formed ids that do not exist", async () => {
    const missing = "00000000-0000-4000-8000-00000000abcd";
    for (const path of [
      `/operations/${missing}`,
      `/operations/${missing}/notes`,
      `/deals/${missing}`,
      `/operateurs/${missing}`,
    ]) {
      expect((await env.client.get(path)).status, path).toBe(404);
    }
  });
});

describe("follow-up note body (spec part 2)", () => {
  const post = (body: unknown) =>
    env.client.write("POST", `/operations/${operationId}/notes`, body);

  it.each([
    ["content", "min length 1", { content: "" }],
    ["content", "max length 10000", { content: "c".repeat(10_001) }],
    ["text", "min length 1", { text: "" }],
    ["text", "max length 10000", { text: "t".repeat(10_001) }],
    [
      "note_type",
      "pattern ^(reporting|call|comite|risque|libre)$",
      { content: "ok", note_type: "meeting" },
    ],
    ["date", "format datetime", { content: "ok", date: "2026-11-21" }],
    ["date", "format datetime", { content: "ok", date: "2026-11-21T10:00:00" }],
    ["category", "min length 1", { content: "ok", category: "" }],
    ["category", "max length 80", { content: "ok", category: "c".repeat(81) }],
    ["author", "unknown field", { content: "ok", author: "me" }],
    ["content", "type string", { content: 42 }],
    ["content", "content or text required", {}],
    ["content", "content or text required", { content: null, text: null }],
  ])("refuses a note breaking %s (%s)", async (field, rule, body) => {
    const before = env.data.notes.length;
    expectRefusal(await post(body), field, rule);
    expect(env.data.notes.length).toBe(before);
  });

  it("refuses a missing body and a non-object body", async () => {
    const none = await env.client.call("POST", `/operations/${operationId}/notes`, {
      idempotencyKey: "no-body",
    });
    expectRefusal(none, "body", "required");
    expectRefusal(await post(["content"]), "body", "type object");
  });

  it("accepts the limits exactly and fills the response's required fields", async () => {
    const reply = await post({
      content: "c".repeat(10_000),
      text: "t",
      note_type: "comite",
      date: "2026-11-20T10:00:00+01:00",
      category: "c".repeat(80),
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      operation_id: operationId,
      note_type: "comite",
      text: "t",
      is_resolved: false,
    });
    const minimal = await post({ text: "Texte seul" });
    expect(minimal.body).toMatchObject({
      content: "Texte seul",
      text: "Texte seul",
      note_type: "libre",
    });
    expect(Date.parse(minimal.body.date)).not.toBeNaN();
  });
});

describe("custom dashboard body (spec part 2)", () => {
  const post = (body: unknown) => env.client.write("POST", "/users/me/custom-dashboards", body);

  it.each([
    ["name", "required", {}],
    ["name", "min length 1", { name: "" }],
    ["name", "max length 200", { name: "n".repeat(201) }],
    ["description", "max length 2000", { name: "ok", description: "d".repeat(2001) }],
    ["layout", "max 50 items", { name: "ok", layout: Array.from({ length: 51 }, () => ({})) }],
    ["layout[0]", "type record", { name: "ok", layout: ["widget"] }],
    ["filters", "type record", { name: "ok", filters: [] }],
    ["share_token", "unknown field", { name: "ok", share_token: "mine" }],
  ])("refuses a dashboard breaking %s (%s)", async (field, rule, body) => {
    expectRefusal(await post(body), field, rule);
  });

  it("accepts the limits exactly", async () => {
    const reply = await post({
      name: "n".repeat(200),
      description: "d".repeat(2000),
      layout: Array.from({ length: 50 }, (_, i) => ({ widget: "kpi", x: i })),
      filters: { classe_actif: ["residentiel"] },
      default_scope: { spv_ids: [] },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.layout).toHaveLength(50);
  });
});

describe("saved views (spec part 2)", () => {
  const create = (body: unknown) => env.client.write("POST", "/users/me/saved-views", body);
  const update = (body: unknown) =>
    env.client.write("PATCH", `/users/me/saved-views/${viewId}`, body);
  const base = { name: "Vue", type: "operations" };

  it.each([
    ["filters", "max 16384 bytes", { ...base, filters: { big: "x".repeat(16_400) } }],
    [
      "filters",
      "max 24 keys",
      { ...base, filters: Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, 1])) },
    ],
    ["columns", "max 64 items", { ...base, columns: Array.from({ length: 65 }, () => "name") }],
    [
      "sort",
      "max 4 items",
      { ...base, sort: Array.from({ length: 5 }, () => ({ sort_by: "name", sort_order: "asc" })) },
    ],
    ["filters.status", "unknown filter key", { ...base, filters: { status: ["travaux"] } }],
    ["filters.ville", "unknown filter key", { ...base, filters: { ville: "Lyon" } }],
    ["columns[1]", "allowed column", { ...base, columns: ["name", "password"] }],
    [
      "sort[0].sort_by",
      "allowed sort field",
      { ...base, sort: [{ sort_by: "secret", sort_order: "asc" }] },
    ],
    [
      "sort[0].sort_order",
      "one of asc, desc",
      { ...base, sort: [{ sort_by: "name", sort_order: "up" }] },
    ],
    ["name", "non-empty after normalisation", { ...base, name: "   " }],
    ["icon", "one of star", { ...base, icon: "unicorn" }],
    ["color", "one of slate", { ...base, color: "#ff0000" }],
    ["type", "one of operations, deals, operateurs", { ...base, type: "funds" }],
  ])("refuses a view breaking %s (%s)", async (field, rule, body) => {
    expectRefusal(await create(body), field, rule);
  });

  it("names the statut key when an operations view sends status", async () => {
    const reply = await create({ ...base, filters: { status: "travaux" } });
    expect(reply.body.detail).toContain("use statut");
  });

  it("accepts the limits exactly and normalises the name", async () => {
    const reply = await create({
      name: "  Opérations   à suivre ",
      type: "operations",
      filters: {
        ...Object.fromEntries(
          [
            "preset",
            "search",
            "statut",
            "statut_interne",
            "statut_operationnel",
            "cycle_interne",
            "classe_actif",
            "type_investissement",
            "operateur_id",
          ].map((k) => [k, null]),
        ),
      },
      columns: Array.from({ length: 64 }, () => "name"),
      sort: Array.from({ length: 4 }, () => ({ sort_by: "encours", sort_order: "desc" })),
      icon: "star",
      color: "teal",
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      name: "Opérations à suivre",
      type: "operations",
      user_id: "usr_camille_martin",
    });
    const deals = await create({
      name: "Pipeline",
      type: "deals",
      filters: { status: ["comite"] },
    });
    expect(deals.status).toBe(201); // status is a filter of deals views, not of operations views
  });

  it("keeps updates bound to the stored type and validates against it", async () => {
    expectRefusal(await update({ type: "deals" }), "type", "immutable");
    expectRefusal(
      await update({ filters: { status: ["comite"] } }),
      "filters.status",
      "unknown filter key",
    );
    expectRefusal(await update({}), "body", "min 1 field");
    expectRefusal(await update({ name: null }), "name", "type string");
  });

  it("treats absent as unchanged and null as cleared", async () => {
    const before = env.data.savedViews.find((v) => v.id === viewId)!;
    const columns = [...before.columns];
    const reply = await update({ icon: null, name: "Renommée" });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ name: "Renommée", icon: null, columns, type: "operations" });
  });
});

describe("other bodies and ids", () => {
  it("validates the workflow bodies the sandbox chose", async () => {
    const preview = await env.client.call("POST", "/workflows/recommendations/preview", {
      body: { limit: 0 },
    });
    expectRefusal(preview, "limit", "min 1");
    const badIds = await env.client.call("POST", "/workflows/recommendations/preview", {
      body: { operation_ids: ["x"] },
    });
    expectRefusal(badIds, "operation_ids[0]", "format guid");
    const badRec = await env.client.write(
      "POST",
      "/workflows/recommendations/rec%20one/workflow",
      {},
    );
    expectRefusal(badRec, "recommendation_id", "pattern");
    const rec = env.data.recommendations.find((r) => r.status === "validated")!;
    const badName = await env.client.write(
      "POST",
      `/workflows/recommendations/${rec.id}/workflow`,
      {
        name: "",
      },
    );
    expectRefusal(badName, "name", "min length 1");
  });

  it("refuses SIREN resolution of an invalid checksum without billing", async () => {
    const before = env.sandbox.control.stats().billableResolutions;
    const reply = await env.client.write("POST", "/enrichment/siren/123456789/resolve", undefined);
    expect(reply.status).toBe(422);
    expect(reply.body.reason_code).toBe("siren_invalid");
    expect(env.sandbox.control.stats().billableResolutions).toBe(before);
  });

  it("refuses a non-JSON write body with 415 and oversized bodies with 413", async () => {
    const text = await env.client.call("POST", `/operations/${operationId}/notes`, {
      rawBody: "content=hi",
      headers: { "content-type": "text/plain" },
      idempotencyKey: "text-body",
    });
    expect(text.status).toBe(415);
    const huge = await env.client.call("POST", `/operations/${operationId}/notes`, {
      rawBody: JSON.stringify({ content: "x".repeat(1_100_000) }),
      headers: { "content-type": "application/json" },
      idempotencyKey: "huge-body",
    });
    expect(huge.status).toBe(413);
  });
});
