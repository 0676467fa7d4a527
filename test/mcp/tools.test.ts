import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_KEYS, DEMO_USERS, type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVENTORY } from "../../src/inventory/index.js";
import { connectInMemory } from "../helpers/mcp.js";

let sandbox: Sandbox;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;

type ToolReply = { structuredContent?: any; content: any[]; isError?: boolean };
const call = async (
  name: string,
  args: Record<string, unknown> = {},
  session = mcp,
): Promise<ToolReply> => (await session.client.callTool({ name, arguments: args })) as ToolReply;
const ok = async (name: string, args: Record<string, unknown> = {}) => {
  const reply = await call(name, args);
  expect(reply.isError, JSON.stringify(reply.content)).toBeFalsy();
  // The text block says the same as the structured content, compactly: a table for lists.
  const text: string = reply.content.at(-1).text;
  const out = reply.structuredContent;
  if (!text.startsWith("{")) {
    expect(text.split("\n")[0]).toContain(`${out.total} in total`);
    for (const item of out.items) expect(text).toContain(item.id);
  } else {
    expect(JSON.parse(text)).toEqual(out);
  }
  return out;
};

beforeAll(async () => {
  sandbox = await startSandbox({
    rateLimit: false,
    today: "2026-11-21",
    keys: [
      ...Object.values(DEMO_KEYS).map((k) => structuredClone(k)),
      {
        keyId: "noreporting",
        secret: "no-reporting-secret",
        label: "no reporting scope",
        scopes: ["operations:read", "deals:read", "taxonomies:read"],
        capabilities: [],
        delegatedUsers: [],
      },
    ],
  });
  mcp = await connectInMemory(sandbox);
});
afterAll(async () => {
  await mcp.close();
  await sandbox.close();
});

describe("read-only tools", () => {
  it("lists every curated read tool of the inventory, each with a title and all four annotations", async () => {
    const { tools } = await mcp.client.listTools();
    // Without a contract or writes: the inventory's curated reads, and nothing else.
    const reads = INVENTORY.tools.filter(
      (t) => t.annotations.readOnlyHint && !t.reach && t.family !== "confirmation",
    );
    expect(reads.length).toBeGreaterThan(20);
    expect(tools.map((t) => t.name).sort()).toEqual(reads.map((t) => t.name).sort());
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.annotations, tool.name).toEqual({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true,
      });
      expect(tool.outputSchema, tool.name).toBeDefined();
    }
  });

  it("list_operations with status=active returns the active operations, compact, with paging", async () => {
    const page = await ok("list_operations", { status: "active", limit: 10 });
    expect(page.total).toBe(54);
    expect(page.items).toHaveLength(10);
    expect(page).toMatchObject({ offset: 0, next_offset: 10 });
    for (const item of page.items) {
      expect(["sourcing", "instruction", "travaux", "commercialisation", "livraison"]).toContain(
        item.status,
      );
      expect(Object.keys(item)).not.toContain("kpi_snapshot");
      if (item.montant_engage !== null) expect(item.montant_engage).toMatch(/^\d+\.\d{2}$/);
    }
    const last = await ok("list_operations", { status: "active", limit: 10, offset: 50 });
    expect(last.items).toHaveLength(4);
    expect(last.next_offset).toBeNull();
  });

  it("walks every page with all_pages, deduplicates, reports progress, and fits the budget", async () => {
    const progress: number[] = [];
    const reply = (await mcp.client.callTool(
      { name: "list_operations", arguments: { all_pages: true, limit: 20 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    )) as ToolReply;
    const out = reply.structuredContent;
    expect(out.total).toBe(72);
    expect(progress).toEqual([20, 40, 60, 72]);
    expect(new Set(out.items.map((i: { id: string }) => i.id)).size).toBe(out.items.length);
    expect(reply.content.at(-1).text.length).toBeLessThanOrEqual(20_000);
    if (out.items.length < 72) {
      expect(out.note).toContain(`offset=${out.items.length}`);
      expect(out.next_offset).toBe(out.items.length);
    }
  });

  it("returns every other read, shaped", async () => {
    const operation = sandbox.control.state.data.operations.find((o) => o.status === "travaux")!;
    const deal = sandbox.control.state.data.deals[0]!;
    const operator = sandbox.control.state.data.operators[0]!;
    const overview = await ok("get_portfolio_overview");
    expect(overview.totals.operations).toBe(72);
    const detail = await ok("get_operation", { operation_id: operation.id });
    expect(detail.kpi_snapshot.crd_total).toMatch(/^\d+\.\d{2}$/);
    const notes = await ok("list_operation_notes", {
      operation_id: sandbox.control.state.data.notes[0]!.operation_id,
    });
    expect(notes.items[0]).toHaveProperty("text");
    expect(
      (await ok("list_deals", { status: "comite" })).items.every(
        (d: { status: string }) => d.status === "comite",
      ),
    ).toBe(true);
    expect((await ok("get_deal", { deal_id: deal.id })).id).toBe(deal.id);
    expect((await ok("list_spvs")).total).toBe(12);
    expect((await ok("find_operators", { search: "promo" })).items.length).toBeGreaterThan(0);
    expect((await ok("get_operator", { operateur_id: operator.id })).siren).toBe(operator.siren);
    expect((await ok("get_taxonomies")).dimensions).toHaveLength(6);
    expect((await ok("get_field_definitions")).items.length).toBeGreaterThan(10);
    expect((await ok("get_field_definitions", { field_key: "surface_plancher" })).unit).toBe("m2");
    expect((await ok("lookup_siren", { siren: operator.siren })).source).toBe("local");
    expect((await ok("validate_siren", { siren: "123456789" })).valid).toBe(false);
    const events = await ok("list_calendar_events", { limit: 5 });
    expect(events.items).toHaveLength(5);
    expect(events.total).toBe(50);
    expect(await ok("get_unread_notification_count")).toMatchObject({
      count: expect.any(Number),
      has_critical: true,
    });
    expect((await ok("preview_workflow_recommendations")).items.length).toBe(5);
    expect((await ok("preview_workflow_recommendations", { include_applied: true })).total).toBe(6);
    expect((await ok("get_my_profile")).id).toBe(DEMO_USERS.camille);
    expect((await ok("list_my_saved_views")).total).toBe(3);
  });

  it("never shows a dashboard's share_token", async () => {
    const reply = await call("list_my_dashboards");
    expect(reply.structuredContent.items.length).toBeGreaterThan(0);
    expect(JSON.stringify(reply)).not.toContain("share_token");
    expect(JSON.stringify(reply)).not.toContain("shr_");
  });

  it("exports the INREV workbook: a link to it and a preview of each sheet, and saves it when asked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "exports-"));
    const session = await connectInMemory(sandbox, { exportDir: dir });
    try {
      const reply = await call("export_inrev_report", {}, session);
      const [link, preview] = reply.content;
      // The bytes are not inlined in every call: they are read through the resource.
      expect(link).toMatchObject({
        type: "resource_link",
        uri: "portfolio://reports/inrev",
        mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      });
      const read = await session.client.readResource({ uri: link.uri });
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(
        Buffer.from(
          (read.contents[0] as { blob: string }).blob,
          "base64",
        ) as unknown as ArrayBuffer,
      );
      expect(workbook.worksheets.map((w) => w.name)).toEqual(["Vehicle", "Assets", "Notes"]);
      expect(preview.text).toContain("| Asset name | Operation id |");
      expect(JSON.stringify(reply).length).toBeLessThan(20_000);
      const out = reply.structuredContent;
      expect(out.sheets.map((s: { name: string }) => s.name)).toEqual([
        "Vehicle",
        "Assets",
        "Notes",
      ]);
      expect(out.sheets[1].rows).toBe(73);
      expect(out.saved_path).toMatch(/inrev-report-\d{4}-\d{2}-\d{2}\.xlsx$/);
      expect(readFileSync(out.saved_path).subarray(0, 2).toString()).toBe("PK");
      expect(statSync(out.saved_path).mode & 0o777).toBe(0o600);
    } finally {
      await session.close();
    }
  });
});

describe("refusals are one clear sentence with isError", () => {
  it("an unknown id: not found, with the request id", async () => {
    const reply = await call("get_operation", {
      operation_id: "00000000-0000-4000-8000-000000000000",
    });
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toMatch(
      /^Not found for get_operation: No operation with id .*\(request pmcp-/,
    );
  });

  it("invalid arguments: each field and rule, and nothing sent", async () => {
    const mark = sandbox.control.mark();
    const reply = await call("list_operations", { limit: 0, colour: "red", spv_id: "SPV 1" });
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toBe(
      "list_operations was not called: spv_id must be a UUID, limit must be at least 1 and colour is not a known field; fix the arguments and try again (nothing was sent).",
    );
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
  });

  it("a period that ends before it starts, refused before anything is sent", async () => {
    const mark = sandbox.control.mark();
    const reply = await call("list_calendar_events", { from: "2026-12-31", to: "2026-12-01" });
    expect(reply.content[0].text).toBe(
      "list_calendar_events was not called: from must not be after to (2026-12-01); fix the arguments and try again (nothing was sent).",
    );
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
  });

  it("an invalid status filter: the API's 422, with the field", async () => {
    const reply = await call("list_operations", { status: "en_cours" });
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toMatch(
      /^The Partner API rejected list_operations: status must be an operation_status taxonomy code/,
    );
  });

  it("a key without the scope", async () => {
    const limited = await connectInMemory(sandbox, {
      settings: { keyId: "noreporting", secret: "no-reporting-secret" },
    });
    try {
      const reply = await call("export_inrev_report", {}, limited);
      expect(reply.isError).toBe(true);
      expect(reply.content[0].text).toMatch(
        /^The Partner API refused export_inrev_report: this API key lacks the scope reporting:read/,
      );
      expect((await call("list_operations", { limit: 1 }, limited)).isError).toBeFalsy();
    } finally {
      await limited.close();
    }
  });

  it("a key restricted to other routes", async () => {
    const limited = await connectInMemory(sandbox, {
      settings: { keyId: DEMO_KEYS.limited.keyId, secret: DEMO_KEYS.limited.secret },
    });
    try {
      const reply = await call("list_deals", {}, limited);
      expect(reply.content[0].text).toMatch(
        /^The Partner API refused list_deals: this API key may not call this route/,
      );
    } finally {
      await limited.close();
    }
  });

  it("a delegated user the key may not act for", async () => {
    const thomas = await connectInMemory(sandbox, {
      settings: { delegatedUser: { email: "thomas.petit@aurore-capital.example" } },
    });
    try {
      const reply = await call("get_my_profile", {}, thomas);
      expect(reply.isError).toBe(true);
      expect(reply.content[0].text).toContain("may not act for the delegated user");
    } finally {
      await thomas.close();
    }
  });

  it("a rate limit, with the time to wait", async () => {
    const session = await connectInMemory(sandbox, { settings: { maxRetryWaitSeconds: 1 } });
    try {
      await call("list_spvs", {}, session);
      sandbox.control.rateLimitNext(1, 30);
      const reply = await call("list_spvs", {}, session);
      expect(reply.content[0].text).toMatch(
        /^The Partner API is rate limiting this server: wait 3\d s before calling list_spvs again/,
      );
    } finally {
      sandbox.control.clearFaults();
      await session.close();
    }
  });

  it("cancellation from the client aborts the upstream request", async () => {
    sandbox.control.delay(3_000, { count: 1, match: { routeId: "deals_list" } });
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 200);
    await expect(
      mcp.client.callTool({ name: "list_deals", arguments: {} }, undefined, {
        signal: controller.signal,
      }),
    ).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(2_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(mcp.logs.text()).toMatch(/"op":"deals_list","status":null/);
  });
});
