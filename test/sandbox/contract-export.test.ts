import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import {
  DEMO_KEYS,
  demoContract,
  type OpenApiDocument,
  ROUTES,
  startSandbox,
} from "@portfolio-mcp/sandbox";
import { createAdmin } from "@portfolio-mcp/sandbox/admin";
import { CONTRACT_TABLE } from "@portfolio-mcp/sandbox/contract/table";
import { EXCHANGE_OPERATION } from "@portfolio-mcp/sandbox/tokens";
import { validate } from "@readme/openapi-parser";
import { beforeAll, describe, expect, it } from "vitest";
import { sharedSandbox } from "../../packages/sandbox/test/helpers/sandbox-per-test.js";

/**
 * The full key's export is committed in test/snapshots so that every change to the contract is
 * reviewed. `UPDATE_SNAPSHOTS=1 npm test` rewrites it on purpose.
 */
const SNAPSHOT = new URL("../snapshots/contract-full.json", import.meta.url);
const EXPORTED_AT = "2026-01-01T00:00:00.000Z";
const run = promisify(execFile);

const operationsOf = (doc: OpenApiDocument) =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
const idsOf = (doc: OpenApiDocument) => operationsOf(doc).map(({ op }) => op.operationId);
const exportOf = (keyId: string) => {
  const doc = demoContract(keyId, { exportedAt: EXPORTED_AT });
  if (!doc) throw new Error(`no demo key ${keyId}`);
  return doc;
};

const full = exportOf(DEMO_KEYS.full.keyId);
const servedCount = ROUTES.length + 1;

describe("the full key's export", () => {
  it("matches the committed snapshot", () => {
    const text = `${JSON.stringify(full, null, 2)}\n`;
    if (process.env.UPDATE_SNAPSHOTS === "1") writeFileSync(SNAPSHOT, text);
    expect(
      existsSync(SNAPSHOT),
      "missing test/snapshots/contract-full.json: run UPDATE_SNAPSHOTS=1 npm test",
    ).toBe(true);
    expect(
      readFileSync(SNAPSHOT, "utf8") === text,
      "the contract changed: review it, then UPDATE_SNAPSHOTS=1 npm test",
    ).toBe(true);
  });

  it("is valid OpenAPI 3.1 for every demo key", async () => {
    expect(full.openapi).toBe("3.1.0");
    for (const key of Object.values(DEMO_KEYS)) {
      const result = await validate(structuredClone(exportOf(key.keyId)) as any);
      expect(result, key.keyId).toMatchObject({ valid: true, warnings: [] });
    }
  });

  it("has unique operation ids, one per served operation, all in the table", () => {
    const ids = idsOf(full);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(servedCount);
    const table = new Map(CONTRACT_TABLE.map((op) => [op.id, op]));
    for (const { path, method, op } of operationsOf(full)) {
      expect(`${method} ${path}`, op.operationId).toBe(
        `${table.get(op.operationId)?.method} ${table.get(op.operationId)?.path}`,
      );
    }
  });

  it("has 158 operations", () => {
    expect(idsOf(full)).toHaveLength(158);
  });

  it("fails validation when an operation id repeats, so the check above can fail", async () => {
    const broken = structuredClone(full) as any;
    broken.paths["/deals"].get.operationId = "operations_list";
    const result = await validate(broken);
    expect(result.valid).toBe(false);
  });

  it("tags each operation with its family and lists the families it uses", () => {
    const families = new Map(CONTRACT_TABLE.map((op) => [op.id, op.family]));
    for (const { op } of operationsOf(full))
      expect(op.tags).toEqual([families.get(op.operationId)]);
    const used = new Set(operationsOf(full).map(({ op }) => (op.tags as string[])[0]));
    expect((full.tags as any[]).map((t) => t.name).sort()).toEqual([...used].sort());
    expect((full.tags as any[]).find((t) => t.name === "alerts").description).toContain(
      "Alerts and notifications",
    );
  });

  it("states scopes, idempotency and delegation on each operation", () => {
    for (const { op } of operationsOf(full)) {
      const route = [EXCHANGE_OPERATION, ...ROUTES].find((r) => r.id === op.operationId)!;
      const params = (op.parameters as any[]).map((p) => p.$ref ?? p.name);
      if (route.kind === "exchange") {
        expect(op.security).toEqual([]);
        expect(op).not.toHaveProperty("x-scope");
        continue;
      }
      expect(op.security, op.operationId).toEqual([{ partnerBearer: [route.scope] }]);
      expect(op["x-scope"]).toBe(route.scope);
      expect(params[0]).toBe("#/components/parameters/XRequestId");
      expect(params.includes("#/components/parameters/IdempotencyKey"), op.operationId).toBe(
        route.kind === "write",
      );
      expect(op["x-idempotency"]).toBe(route.kind === "write" ? "required" : undefined);
      expect(op["x-delegation"]).toEqual(
        route.capability ? { capability: route.capability } : undefined,
      );
      expect(params.includes("#/components/parameters/DelegatedUserEmail")).toBe(
        Boolean(route.capability),
      );
      const responses = op.responses as Record<string, any>;
      for (const status of ["401", "403", "422", "429", "500"])
        expect(responses[status]).toBeDefined();
    }
    const postpone = full.paths["/alerts/{alert_id}/postpone"]!.post!;
    expect((postpone.responses as any)["409"]["x-reason-codes"]).toContain("invalid_transition");
    const rateLimited = (full.components as any).responses.Problem429;
    expect(rateLimited.headers["Retry-After"]).toBeDefined();
    expect(rateLimited.content["application/problem+json"].schema).toEqual({
      $ref: "#/components/schemas/Problem",
    });
  });

  it("describes the token exchange without a bearer and files by their content type", () => {
    const exchange = full.paths["/auth/token"]!.post!;
    expect(exchange.operationId).toBe("auth_token");
    expect((exchange.requestBody as any).content["application/json"].schema.required).toEqual([
      "key_id",
      "timestamp",
      "nonce",
      "signature",
    ]);
    const inrev = (full.paths["/reports/inrev"]!.get!.responses as any)["200"];
    expect(Object.keys(inrev.content)).toEqual([
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ]);
  });

  it("carries the spec's limits and formats in its schemas", () => {
    const schemas = (full.components as any).schemas;
    expect(schemas.CalendarEventResponse.properties.title.maxLength).toBe(300);
    expect(schemas.CalendarEventResponse.properties.event_date.format).toBe("date");
    expect(schemas.CalendarEventResponse.properties.created_at.format).toBe("date-time");
    expect(schemas.CalendarEventResponse.properties.id.format).toBe("uuid");
    expect(schemas.ManualCreationIdempotencyReceipt.properties.payload_digest.pattern).toBe(
      "^[0-9a-f]{64}$",
    );
    expect(schemas.Deal.properties.montant_estime.anyOf[0].pattern).toBe(
      "^(?!^[-+.]*$)[+-]?0*\\d*\\.?\\d*$",
    );
    const calendarList = full.paths["/calendar/events"]!.get!.parameters as any[];
    expect(calendarList.find((p) => p.name === "limit")).toEqual({
      name: "limit",
      in: "query",
      required: false,
      schema: { type: "integer", minimum: 1, maximum: 200, default: 20 },
    });
    const note = (full.paths["/operations/{operation_id}/notes"]!.post!.requestBody as any).content[
      "application/json"
    ].schema;
    expect(note.properties.note_type.anyOf[0].pattern).toBe(
      "^(reporting|call|comite|risque|libre)$",
    );
    expect(note.properties.content.anyOf[0]).toMatchObject({ minLength: 1, maxLength: 10000 });
  });
});

describe("exports of the other demo keys", () => {
  const readOnly = exportOf(DEMO_KEYS.readOnly.keyId);
  const limited = exportOf(DEMO_KEYS.limited.keyId);
  const manager = exportOf(DEMO_KEYS.portfolioManager.keyId);

  it("keeps the read-only key to reads, and gives it every read", () => {
    const reads = [EXCHANGE_OPERATION, ...ROUTES]
      .filter((op) => op.kind !== "write")
      .map((op) => op.id);
    expect(idsOf(readOnly).sort()).toEqual(reads.sort());
  });

  it("keeps the limited key to its two routes and the token exchange", () => {
    expect(idsOf(limited)).toEqual(["auth_token", "operations_list", "calendar_list"]);
    expect(limited["x-key"]).toMatchObject({
      key_id: "sandboxlimited",
      scopes: ["operations:read", "calendar:read"],
      routes: ["operations_list", "calendar_list"],
      capabilities: [],
      exported_at: EXPORTED_AT,
    });
    expect((limited.tags as any[]).map((t) => t.name)).toEqual(["auth", "operations", "calendar"]);
  });

  it("gives the portfolio manager every read and only the writes of the daily loop", () => {
    const ids = new Set(idsOf(manager));
    for (const id of idsOf(readOnly)) expect(ids.has(id), id).toBe(true);
    const writes = [...ids].filter((id) => !idsOf(readOnly).includes(id)).sort();
    expect(writes).toEqual(
      ROUTES.filter(
        (op) =>
          op.kind === "write" &&
          (["alerts", "calendar", "tasks", "documents"].includes(op.family) ||
            op.id.startsWith("operation_note_")),
      )
        .map((op) => op.id)
        .sort(),
    );
    expect(writes).toContain("alert_postpone");
    expect(writes).toContain("operation_note_create");
    expect(writes).not.toContain("siren_resolve");
    expect(writes).not.toContain("saved_view_create");
  });

  it("differs visibly between keys", () => {
    const sizes = [full, manager, readOnly, limited].map((doc) => idsOf(doc).length);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    expect(new Set(sizes).size).toBe(4);
  });
});

describe("serving the export", () => {
  // One sandbox for these tests: they only read what it serves.
  const env = sharedSandbox({ rateLimit: false });
  let admin: string;
  beforeAll(() => {
    admin = env.sandbox.baseUrl.replace(/\/v1$/, "/_admin");
  });

  it("serves each key's export over loopback without a bearer", async () => {
    for (const key of Object.values(DEMO_KEYS)) {
      const res = await fetch(`${admin}/keys/${key.keyId}/contract.json`);
      expect(res.status).toBe(200);
      const served = (await res.json()) as any;
      expect(served.servers).toEqual([{ url: env.sandbox.baseUrl }]);
      const expected = exportOf(key.keyId) as any;
      served["x-key"].exported_at = EXPORTED_AT;
      expected.servers = served.servers;
      expect(served).toEqual(expected);
    }
  });

  it("answers 404 for an unknown key or path, 405 for another method", async () => {
    const unknown = await fetch(`${admin}/keys/nosuchkey/contract.json`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ reason_code: "key_not_found" });
    expect((await fetch(`${admin}/keys`)).status).toBe(404);
    const post = await fetch(`${admin}/keys/sandboxdemo/contract.json`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
  });

  it("answers only the loopback address", () => {
    const handle = createAdmin({
      keys: new Map(),
      operations: [],
      contractOptions: () => {
        throw new Error("not reached");
      },
    });
    expect(() =>
      handle({
        method: "GET",
        path: "/_admin/keys/sandboxdemo/contract.json",
        address: "10.1.2.3",
        host: undefined,
      }),
    ).toThrow("loopback");
  });

  it("describes moved routes at the paths the sandbox serves them", async () => {
    const moved = await startSandbox({ routePaths: { deals_list: "/pipeline/deals" } });
    try {
      const res = await fetch(
        `${moved.baseUrl.replace(/\/v1$/, "")}/_admin/keys/sandboxdemo/contract.json`,
      );
      const doc = (await res.json()) as OpenApiDocument;
      expect(doc.paths["/pipeline/deals"]?.get?.operationId).toBe("deals_list");
      // The list moved; the creation, at the same path, did not.
      expect(doc.paths["/deals"]?.get).toBeUndefined();
      expect(doc.paths["/deals"]?.post?.operationId).toBe("deal_create");
    } finally {
      await moved.close();
    }
  });
});

describe("portfolio-mcp sandbox contract", () => {
  const cli = new URL("../../dist/cli.js", import.meta.url).pathname;

  it("prints a key's export as JSON on stdout", async () => {
    const { stdout } = await run("node", [cli, "sandbox", "contract", "--key", "sandboxpm"]);
    const printed = JSON.parse(stdout);
    printed["x-key"].exported_at = EXPORTED_AT;
    expect(printed).toEqual(exportOf("sandboxpm"));
  });

  it("names the demo keys when the key is unknown or missing", async () => {
    for (const [args, code] of [
      [["--key", "nosuchkey"], 1],
      [[], 2], // a usage error
    ] as const) {
      const failure = await run("node", [cli, "sandbox", "contract", ...args]).catch((e) => e);
      expect(failure.code).toBe(code);
      expect(failure.stderr).toContain("sandboxdemo");
      expect(failure.stdout).toBe("");
    }
  });
});
