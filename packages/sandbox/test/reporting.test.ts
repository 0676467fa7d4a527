import { describe, expect, it } from "vitest";
import { ACTIVE_OPERATION_STATUSES } from "../src/data/taxonomies.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false });

const template = (name: string) => env.data.reportTemplates.find((t) => t.name === name)!;
const preview = (id: string, body?: unknown) =>
  env.client.call("POST", `/reports/templates/${id}/preview`, body === undefined ? {} : { body });

describe("reporting templates", () => {
  it("list the entity's read-only templates first, then its users'", async () => {
    const { body } = await env.client.get("/reports/templates");
    expect(body.total).toBe(5);
    expect(body.items.map((t: any) => t.is_system)).toEqual([true, true, false, false, false]);
    const repayments = await env.client.get("/reports/templates", {
      query: { dataset: "repayments" },
    });
    expect(repayments.body.items.every((t: any) => t.dataset === "repayments")).toBe(true);
  });

  it("preview as { columns, rows, total }: every active operation, the largest outstanding first", async () => {
    const outstanding = template("Encours par opération");
    const { body } = await preview(outstanding.id, { limit: 100 });
    expect(Object.keys(body)).toEqual(["columns", "rows", "total"]);
    const active = env.data.operations.filter((o) =>
      (ACTIVE_OPERATION_STATUSES as readonly string[]).includes(o.status),
    );
    expect(body.total).toBe(active.length);
    expect(body.columns.map((c: any) => c.key)).toEqual(outstanding.columns.map((c) => c.key));
    const at = body.columns.findIndex((c: any) => c.key === "encours");
    expect(body.columns[at]).toMatchObject({ type: "amount", label: "Encours (EUR)" });
    const amounts = body.rows.map((r: any[]) => r[at]);
    for (const amount of amounts) expect(amount).toMatch(/^\d+\.\d{2}$/);
    expect(amounts.map(Number)).toEqual([...amounts.map(Number)].sort((a, b) => b - a));
    const first = active.find((o) => o.name === body.rows[0][0])!;
    expect(body.rows[0][at]).toBe(first.financial_summary.encours);
  });

  it("page a preview and let filters replace the template's for that preview only", async () => {
    const late = template("Échéances à venir et impayés");
    const all = await preview(late.id, { limit: 100 });
    const page = await preview(late.id, { limit: 3, offset: 2 });
    expect(page.body.rows).toEqual(all.body.rows.slice(2, 5));
    expect(page.body.total).toBe(all.body.total);
    const onlyLate = await preview(late.id, { filters: { status: ["late"] }, limit: 100 });
    const status = onlyLate.body.columns.findIndex((c: any) => c.key === "status");
    expect(onlyLate.body.rows.every((r: any[]) => r[status] === "late")).toBe(true);
    expect(onlyLate.body.total).toBeLessThan(all.body.total);
    expect((await preview(late.id)).body.total).toBe(all.body.total);
    const wrong = await preview(late.id, { filters: { classe_actif: ["bureaux"] } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].field).toBe("filters.classe_actif");
  });

  it("export every row as a real XLSX workbook with formats and parameters", async () => {
    const covenants = template("Covenants LTV et DSCR");
    const reply = await env.client.get(`/reports/templates/${covenants.id}/export`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe(
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    );
    expect(reply.body.subarray(0, 4).toString("latin1")).toBe("PK\x03\x04");
    const { default: ExcelJS } = await import("exceljs");
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(reply.body as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet("Rapport")!;
    const headers = (sheet.getRow(1).values as unknown[]).slice(1);
    expect(headers).toEqual(covenants.columns.map((c) => c.label));
    const { body } = await preview(covenants.id, { limit: 100 });
    expect(sheet.rowCount - 1).toBe(body.total);
    const encours = covenants.columns.findIndex((c) => c.key === "encours") + 1;
    const cell = sheet.getRow(2).getCell(encours);
    expect(cell.value).toBe(Number(body.rows[0][encours - 1]));
    expect(cell.numFmt).toBe("#,##0.00");
    expect(workbook.getWorksheet("Paramètres")?.getRow(2).getCell(2).value).toBe(covenants.name);
  });

  it("create a template checked against its dataset, and keep names unique", async () => {
    const created = await env.client.write("POST", "/reports/templates", {
      name: "Ventes par ville",
      dataset: "operations",
      columns: [
        { key: "ville" },
        { key: "name", label: "Programme" },
        { key: "taux_commercialisation" },
      ],
      filters: { classe_actif: ["residentiel"] },
      sort: { by: "ville", order: "asc" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      is_system: false,
      version: 1,
      created_by: "apikey:sandboxdemo",
    });
    expect(created.body.columns[1]).toEqual({ key: "name", label: "Programme", type: "string" });
    const rows = (await preview(created.body.id, { limit: 100 })).body;
    expect(rows.total).toBe(
      env.data.operations.filter((o) => o.classe_actif === "residentiel").length,
    );
    const taken = await env.client.write("POST", "/reports/templates", {
      name: "VENTES PAR VILLE",
      dataset: "operations",
      columns: [{ key: "name" }],
    });
    expect(taken.body.reason_code).toBe("template_name_taken");
    const wrong = await env.client.write("POST", "/reports/templates", {
      name: "Mauvais",
      dataset: "repayments",
      columns: [{ key: "ltv" }, { key: "due_date" }],
      filters: { status: ["travaux"] },
      sort: { by: "encours", order: "asc" },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.reason_code).toBe("invalid_template");
    expect(wrong.body.errors.map((e: any) => e.field)).toEqual([
      "columns[0].key",
      "filters.status[0]",
      "sort.by",
    ]);
  });

  it("change a user's template, never one the entity ships with", async () => {
    const mine = template("Impayés");
    const changed = await env.client.write("PATCH", `/reports/templates/${mine.id}`, {
      columns: [{ key: "operation" }, { key: "remaining" }],
      sort: null,
    });
    expect(changed.body).toMatchObject({ version: 2, sort: null });
    expect(changed.body.columns.map((c: any) => c.key)).toEqual(["operation", "remaining"]);
    expect((await preview(mine.id)).body.columns).toHaveLength(2);
    const system = await env.client.write(
      "PATCH",
      `/reports/templates/${template("Encours par opération").id}`,
      {
        name: "Autre",
      },
    );
    expect(system.status).toBe(409);
    expect(system.body.reason_code).toBe("template_read_only");
    const dataset = await env.client.write("PATCH", `/reports/templates/${mine.id}`, {
      dataset: "operations",
    });
    expect(dataset.status).toBe(422);
  });
});
