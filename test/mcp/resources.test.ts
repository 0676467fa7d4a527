import type { McpError } from "@modelcontextprotocol/sdk/types.js";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileTemplate } from "../../src/mcp/uri-template.js";
import { connectInMemory } from "../helpers/mcp.js";

let sandbox: Sandbox;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;

const read = async (uri: string) => {
  const { contents } = await mcp.client.readResource({ uri });
  expect(contents).toHaveLength(1);
  return contents[0] as { uri: string; mimeType: string; text?: string; blob?: string };
};
const readJson = async (uri: string) => JSON.parse((await read(uri)).text ?? "null");
const refusal = (uri: string) =>
  mcp.client.readResource({ uri }).then(
    () => {
      throw new Error(`expected ${uri} to be refused`);
    },
    (error: unknown) => error as McpError,
  );

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false, today: "2026-11-21" });
  mcp = await connectInMemory(sandbox);
});
afterAll(async () => {
  await mcp.close();
  await sandbox.close();
});

describe("resources", () => {
  it("lists the fixed resources and a first page of operations", async () => {
    const { resources } = await mcp.client.listResources();
    const uris = resources.map((r) => r.uri);
    for (const uri of [
      "portfolio://overview",
      "portfolio://taxonomies",
      "portfolio://field-definitions",
      "portfolio://notifications/unread-count",
      "portfolio://reports/inrev",
      "portfolio://me",
      "portfolio://me/saved-views",
      "portfolio://me/custom-dashboards",
    ]) {
      expect(uris).toContain(uri);
    }
    const operations = resources.filter((r) => r.uri.startsWith("portfolio://operations/"));
    expect(operations).toHaveLength(50);
    expect(operations[0]!.name).not.toMatch(/^[0-9a-f-]{36}$/);
  });

  it("lists the templates", async () => {
    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(
      [
        "portfolio://operations{?name,status,spv_id,limit,offset}",
        "portfolio://operations/{operation_id}",
        "portfolio://operations/{operation_id}/notes",
        "portfolio://operations/{operation_id}/timeline{?types,since,until,limit,offset}",
        "portfolio://alerts{?status,severity,alert_type,operation_id,limit,offset}",
        "portfolio://deals{?status,limit,offset}",
        "portfolio://deals/{deal_id}",
        "portfolio://spvs{?name}",
        "portfolio://operators{?name,search,limit,offset}",
        "portfolio://operators/{operateur_id}",
        "portfolio://field-definitions/{field_key}",
        "portfolio://siren/{siren}",
        "portfolio://calendar/events{?limit,offset}",
      ].sort(),
    );
  });

  it("reads every resource, with optional query variables in any order", async () => {
    const data = sandbox.control.state.data;
    const operation = data.operations[0]!;
    expect((await readJson("portfolio://overview")).totals.operations).toBe(72);
    expect((await readJson("portfolio://operations")).total).toBe(72);
    const active = await readJson("portfolio://operations?limit=5&status=active");
    expect(active).toMatchObject({ total: 54, next_offset: 5 });
    expect(
      (await readJson(`portfolio://operations?name=${encodeURIComponent(operation.name)}`)).items[0]
        .id,
    ).toBe(operation.id);
    expect((await readJson(`portfolio://operations/${operation.id}`)).name).toBe(operation.name);
    const withNotes = data.notes[0]!.operation_id;
    expect((await readJson(`portfolio://operations/${withNotes}/notes`)).total).toBeGreaterThan(0);
    expect((await readJson("portfolio://deals?status=closing")).total).toBe(4);
    expect((await readJson(`portfolio://deals/${data.deals[0]!.id}`)).id).toBe(data.deals[0]!.id);
    expect((await readJson("portfolio://spvs")).total).toBe(12);
    expect((await readJson("portfolio://operators?search=promotion&limit=2")).items).toHaveLength(
      2,
    );
    expect((await readJson(`portfolio://operators/${data.operators[1]!.id}`)).id).toBe(
      data.operators[1]!.id,
    );
    expect((await readJson("portfolio://taxonomies")).dimensions).toHaveLength(6);
    expect((await readJson("portfolio://field-definitions")).total).toBeGreaterThan(10);
    expect((await readJson("portfolio://field-definitions/nombre_lots")).unit).toBe("lots");
    expect((await readJson(`portfolio://siren/${data.operators[0]!.siren}`)).siren).toBe(
      data.operators[0]!.siren,
    );
    expect((await readJson("portfolio://calendar/events?offset=45")).items).toHaveLength(5);
    expect((await readJson("portfolio://notifications/unread-count")).has_critical).toBe(true);
    expect((await readJson("portfolio://me")).id).toBe("usr_camille_martin");
    expect((await readJson("portfolio://me/saved-views")).total).toBe(3);
    const dashboards = await read("portfolio://me/custom-dashboards");
    expect(dashboards.text).not.toContain("share_token");
    const inrev = await read("portfolio://reports/inrev");
    expect(inrev.mimeType).toBe(
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    );
    expect(
      Buffer.from(inrev.blob ?? "", "base64")
        .subarray(0, 2)
        .toString(),
    ).toBe("PK");
  });

  it("refuses unknown resources, bad variables and missing records with MCP errors", async () => {
    // -32602 with data.uri: the code the 2026-07-28 specification names, for both eras.
    const nowhere = await refusal("portfolio://nowhere");
    expect(nowhere.code).toBe(-32602);
    expect(nowhere.data).toEqual({ uri: "portfolio://nowhere" });
    expect((await refusal("portfolio://operations?colour=red")).code).toBe(-32602);
    const bad = await refusal("portfolio://operations?limit=900");
    expect(bad.code).toBe(-32602);
    // One prefix, the client's own: the server sends the sentence alone.
    expect(bad.message).toBe(
      "MCP error -32602: The resource portfolio://operations?limit=900 was not read: limit must be at most 200; fix the arguments and try again (nothing was sent).",
    );
    const missing = await refusal("portfolio://operations/00000000-0000-4000-8000-000000000000");
    expect(missing.code).toBe(-32602);
    expect(missing.data).toMatchObject({ uri: expect.stringContaining("00000000-0000-4000") });
    expect(missing.message).toContain("Not found");
    const invalidStatus = await refusal("portfolio://operations?status=en_cours");
    expect(invalidStatus.code).toBe(-32602);
  });
});

describe("completion", () => {
  const complete = async (uri: string, name: string, value: string) =>
    (await mcp.client.complete({ ref: { type: "ref/resource", uri }, argument: { name, value } }))
      .completion.values;

  it("completes operation, deal and operator ids by name, status codes, SPV ids and field keys", async () => {
    const data = sandbox.control.state.data;
    const target = data.operations[3]!;
    const city = target.name.split(" – ")[1]!;
    const ids = await complete(
      "portfolio://operations/{operation_id}",
      "operation_id",
      city.toLowerCase(),
    );
    expect(ids).toContain(target.id);
    for (const id of ids)
      expect(data.operations.find((o) => o.id === id)!.name.toLowerCase()).toContain(
        city.toLowerCase(),
      );
    expect(
      await complete("portfolio://operations{?name,status,spv_id,limit,offset}", "status", "co"),
    ).toEqual(["commercialisation"]);
    expect(
      await complete("portfolio://operations{?name,status,spv_id,limit,offset}", "status", ""),
    ).toContain("active");
    const spv = data.spvs[2]!;
    expect(
      await complete(
        "portfolio://operations{?name,status,spv_id,limit,offset}",
        "spv_id",
        spv.name.split(" ").at(-1)!,
      ),
    ).toContain(spv.id);
    const deal = data.deals[7]!;
    expect(
      await complete("portfolio://deals/{deal_id}", "deal_id", deal.name.slice(0, 6)),
    ).toContain(deal.id);
    expect(await complete("portfolio://deals{?status,limit,offset}", "status", "d")).toEqual([
      "due_diligence",
    ]);
    expect(
      await complete("portfolio://operators/{operateur_id}", "operateur_id", "nordis"),
    ).toEqual([data.operators.find((o) => o.name === "Nordis Promotion")!.id]);
    expect(
      await complete("portfolio://field-definitions/{field_key}", "field_key", "taux"),
    ).toEqual(["taux_commercialisation"]);
    expect(await complete("portfolio://siren/{siren}", "siren", "1")).toEqual([]);
  });
});

describe("URI templates", () => {
  it("match path variables and optional query variables in any order", () => {
    const t = compileTemplate("portfolio://deals{?status,limit,offset}");
    expect(t.match("portfolio://deals")).toEqual({});
    expect(t.match("portfolio://deals?offset=5&status=comite")).toEqual({
      offset: "5",
      status: "comite",
    });
    expect(t.match("portfolio://deals/abc")).toBeNull();
    expect(t.match("portfolio://deals?other=1")).toBeNull();
    const d = compileTemplate("portfolio://operations/{operation_id}/notes");
    expect(d.match("portfolio://operations/a%20b/notes")).toEqual({ operation_id: "a b" });
    expect(d.match("portfolio://operations/a/b/notes")).toBeNull();
    expect(d.match("portfolio://operations/%E0%A4%A/notes")).toBeNull();
  });
});
