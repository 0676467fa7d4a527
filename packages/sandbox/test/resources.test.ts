import ExcelJS from "exceljs";
import { describe, expect, it } from "vitest";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

const DECIMAL = /^-?\d+\.\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false, today: "2026-11-21" });

async function allOperations() {
  return (await env.client.get("/operations", { query: { limit: 200 } })).body;
}

describe("operations", () => {
  it("lists items with every field of spec part 2 and no detail-only fields", async () => {
    const { items, total } = await allOperations();
    expect(total).toBeGreaterThanOrEqual(60);
    for (const item of items) {
      expect(Object.keys(item).sort()).toEqual(
        [
          "id",
          "relationship_status",
          "relationship_label",
          "name",
          "status",
          "phase",
          "version",
          "created_at",
          "updated_at",
          "spv_id",
          "type_investissement",
          "type_operation",
          "classe_actif",
          "statut_interne",
          "statut_operationnel",
          "sous_classe_actif",
          "financial_summary",
          "reporting_summary",
        ].sort(),
      );
      expect(item.id).toMatch(UUID);
      expect(["attached", "pending_attachment"]).toContain(item.relationship_status);
      expect(Number.isInteger(item.version)).toBe(true);
      expect(item.created_at).toMatch(DATE_TIME);
      expect(item.financial_summary.montant_engage).toMatch(DECIMAL);
    }
  });

  it("expands status=active to the five active statuses", async () => {
    const active = (
      await env.client.get("/operations", { query: { status: "active", limit: 200 } })
    ).body;
    const every = (await allOperations()).items;
    const expected = every.filter((o: any) =>
      ["sourcing", "instruction", "travaux", "commercialisation", "livraison"].includes(o.status),
    );
    expect(active.total).toBe(expected.length);
    expect(new Set(active.items.map((o: any) => o.status))).toEqual(
      new Set(["sourcing", "instruction", "travaux", "commercialisation", "livraison"]),
    );
    const closed = (await env.client.get("/operations", { query: { status: "remboursee" } })).body;
    expect(closed.total).toBeGreaterThan(0);
    expect(closed.items.every((o: any) => o.status === "remboursee")).toBe(true);
  });

  it("matches name exactly, case-insensitively and trimmed", async () => {
    const target = (await allOperations()).items[5];
    const loose = await env.client.get("/operations", {
      query: { name: `  ${target.name.toUpperCase()}  ` },
    });
    expect(loose.body.items.map((o: any) => o.id)).toEqual([target.id]);
    const partial = await env.client.get("/operations", {
      query: { name: target.name.slice(0, 8) },
    });
    expect(partial.body.total).toBe(0);
  });

  it("filters by SPV and pages with limit and offset", async () => {
    const spv = env.data.spvs[0]!;
    const inSpv = (await env.client.get("/operations", { query: { spv_id: spv.id, limit: 200 } }))
      .body;
    expect(inSpv.total).toBeGreaterThan(0);
    expect(inSpv.items.every((o: any) => o.spv_id === spv.id)).toBe(true);

    const seen = new Set<string>();
    let total = 0;
    for (let offset = 0; ; offset += 7) {
      const page = (await env.client.get("/operations", { query: { limit: 7, offset } })).body;
      total = page.total;
      for (const item of page.items) seen.add(item.id);
      if (page.items.length < 7) break;
    }
    expect(seen.size).toBe(total);
  });

  it("returns the detail with kpi_snapshot, financial_summary and business data", async () => {
    const travaux = env.data.operations.find((o) => o.status === "travaux")!;
    const { status, body } = await env.client.get(`/operations/${travaux.id.toUpperCase()}`);
    expect(status).toBe(200);
    expect(body.id).toBe(travaux.id);
    for (const key of [
      "crd_total",
      "crd_senior",
      "crd_mezzanine",
      "valeur_venale",
      "noi",
      "service_dette",
    ]) {
      expect(body.kpi_snapshot[key], key).toMatch(DECIMAL);
    }
    // crd_total is the sum of its tranches, in cents, never through floats.
    const cents = (s: string) => BigInt(s.replace(".", ""));
    expect(cents(body.kpi_snapshot.crd_total)).toBe(
      cents(body.kpi_snapshot.crd_senior) + cents(body.kpi_snapshot.crd_mezzanine),
    );
    expect(body.financial_summary.devise).toBe("EUR");
    expect(body.data).toHaveProperty("surface_plancher");
    expect(body).toHaveProperty("operateur_id");
  });
});

describe("notes", () => {
  it("lists an operation's notes newest first, with every response field", async () => {
    const withNotes = env.data.notes[0]!.operation_id;
    const { body } = await env.client.get(`/operations/${withNotes}/notes`);
    expect(body.total).toBeGreaterThan(0);
    for (const note of body.items) {
      for (const field of [
        "id",
        "operation_id",
        "user_id",
        "author_name",
        "content",
        "note_type",
        "date",
        "text",
        "category",
        "created_at",
        "updated_at",
      ]) {
        expect(note, field).toHaveProperty(field);
      }
      expect(note.is_resolved).toBeTypeOf("boolean");
    }
    const dates = body.items.map((n: any) => n.date);
    expect([...dates].sort().reverse()).toEqual(dates);
  });

  it("shows a created note in the list, authored by the key's service account", async () => {
    const id = env.data.operations[60]!.id;
    const created = await env.client.write("POST", `/operations/${id}/notes`, {
      content: "Nouvelle note",
      note_type: "reporting",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      user_id: "apikey:sandboxdemo",
      category: "suivi",
      is_resolved: false,
    });
    const list = await env.client.get(`/operations/${id}/notes`);
    expect(list.body.items.map((n: any) => n.id)).toContain(created.body.id);
  });
});

describe("deals, SPVs, operators", () => {
  it("lists deals over every pipeline status, with decimal strings and filters", async () => {
    const { body } = await env.client.get("/deals", { query: { limit: 200 } });
    expect(body.total).toBe(25);
    expect(new Set(body.items.map((d: any) => d.status))).toEqual(
      new Set(["sourcing", "analyse", "due_diligence", "comite", "closing", "abandonne"]),
    );
    for (const deal of body.items) {
      if (deal.montant_estime !== null)
        expect(deal.montant_estime).toMatch(/^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/);
      if (deal.date_sourcing !== null) expect(deal.date_sourcing).toMatch(DATE);
    }
    const comite = (await env.client.get("/deals", { query: { status: "comite" } })).body;
    expect(comite.items.every((d: any) => d.status === "comite")).toBe(true);
    const one = await env.client.get(`/deals/${body.items[0].id}`);
    expect(one.body).toEqual(body.items[0]);
  });

  it("lists SPVs with an exact name filter", async () => {
    const { body } = await env.client.get("/spvs");
    expect(body.total).toBe(12);
    const named = await env.client.get("/spvs", {
      query: { name: ` ${body.items[3].name.toLowerCase()} ` },
    });
    expect(named.body.items).toEqual([body.items[3]]);
  });

  it("finds operators by exact name or partial search, and returns the full record", async () => {
    const { body } = await env.client.get("/operateurs", { query: { limit: 200 } });
    expect(body.total).toBe(23);
    const exact = await env.client.get("/operateurs", { query: { name: "nordis promotion" } });
    expect(exact.body.items.map((o: any) => o.name)).toEqual(["Nordis Promotion"]);
    const partial = await env.client.get("/operateurs", { query: { search: "PROMO" } });
    expect(partial.body.total).toBeGreaterThanOrEqual(2);
    const operator = (await env.client.get(`/operateurs/${exact.body.items[0].id}`)).body;
    for (const field of [
      "id",
      "data",
      "source_extraction",
      "litiges_en_cours",
      "created_at",
      "updated_at",
      "name",
      "siren",
      "type",
    ]) {
      expect(operator, field).toHaveProperty(field);
    }
  });
});

describe("reference data", () => {
  it("serves the six taxonomy dimensions", async () => {
    const { body } = await env.client.get("/taxonomies");
    expect(body.dimensions.map((d: any) => d.dimension).sort()).toEqual([
      "asset_class",
      "internal_status",
      "investment_type",
      "operation_status",
      "operation_type",
      "operational_status",
    ]);
  });

  it("serves field definitions with units, one by key, and 404 for an unknown key", async () => {
    const { body } = await env.client.get("/field-definitions");
    expect(body.items.find((d: any) => d.key === "surface_plancher")).toMatchObject({
      unit: "m2",
      type: "decimal",
    });
    const one = await env.client.get("/field-definitions/by-key/taux_commercialisation");
    expect(one.body).toMatchObject({ unit: "%", availability: "available" });
    const missing = await env.client.get("/field-definitions/by-key/no_such_field");
    expect(missing.status).toBe(404);
  });
});

describe("SIREN enrichment", () => {
  it("validates format and checksum without a provider", async () => {
    const operatorSiren = env.data.operators[0]!.siren!;
    expect(
      (await env.client.get(`/enrichment/siren/${operatorSiren}/validate`)).body,
    ).toMatchObject({
      valid: true,
    });
    const typo = env.data.operators[21]!.siren!;
    expect((await env.client.get(`/enrichment/siren/${typo}/validate`)).body).toMatchObject({
      format_valid: true,
      checksum_valid: false,
      valid: false,
    });
    expect((await env.client.get("/enrichment/siren/12AB/validate")).body).toMatchObject({
      format_valid: false,
    });
    expect((await env.client.get("/enrichment/siren/356000000/validate")).body.valid).toBe(true); // La Poste
  });

  it("reads local data only, and resolves explicitly with billing counted once per intent", async () => {
    const local = env.data.operators[2]!.siren!;
    expect((await env.client.get(`/enrichment/siren/${local}`)).body.source).toBe("local");
    const unknown = "732829320"; // valid checksum, not in local data
    const before = env.sandbox.control.stats().billableResolutions;
    const missing = await env.client.get(`/enrichment/siren/${unknown}`);
    expect(missing.status).toBe(404);
    expect(env.sandbox.control.stats().billableResolutions).toBe(before);

    const first = await env.client.write(
      "POST",
      `/enrichment/siren/${unknown}/resolve`,
      undefined,
      {
        idempotencyKey: "resolve-1",
      },
    );
    const again = await env.client.write(
      "POST",
      `/enrichment/siren/${unknown}/resolve`,
      undefined,
      {
        idempotencyKey: "resolve-1",
      },
    );
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ siren: unknown, billable: true, source: "provider" });
    expect(again.body).toEqual(first.body);
    expect(env.sandbox.control.stats().billableResolutions).toBe(before + 1);
    expect((await env.client.get(`/enrichment/siren/${unknown}`)).body.source).toBe("cache");
  });
});

describe("calendar and notifications", () => {
  it("lists 50 events in date order with every field, receipts included", async () => {
    const { body } = await env.client.get("/calendar/events", { query: { limit: 200 } });
    expect(body.total).toBe(50);
    const dates = body.items.map((e: any) => e.event_date);
    expect([...dates].sort()).toEqual(dates);
    const manual = body.items.filter((e: any) => e.idempotency_receipt !== null);
    expect(manual.length).toBeGreaterThan(0);
    for (const e of manual) {
      expect(e.idempotency_receipt.payload_digest).toMatch(/^[0-9a-f]{64}$/);
      expect(e.idempotency_receipt).toMatchObject({
        replayed: false,
        capability: expect.any(String),
      });
    }
    for (const e of body.items) {
      expect(e.title.length).toBeLessThanOrEqual(300);
      expect(e.event_type.length).toBeLessThanOrEqual(50);
      expect(e.event_date).toMatch(DATE);
      expect(e).toHaveProperty("entity_id");
    }
    const soon = body.items.filter(
      (e: any) => e.event_date >= "2026-11-21" && e.event_date <= "2026-11-30",
    );
    expect(soon.length).toBeGreaterThanOrEqual(10);
  });

  it("counts unread notifications and flags critical ones", async () => {
    const { body } = await env.client.get("/notifications/unread-count");
    expect(body.count).toBeGreaterThan(0);
    expect(body.has_critical).toBe(true);
  });
});

describe("portfolio and reporting", () => {
  it("aggregates counts and decimal-string amounts that add up", async () => {
    const { body } = await env.client.get("/portfolio");
    const sum = (rows: any[], field: string) =>
      rows.reduce((acc, r) => acc + BigInt(r[field].replace(".", "")), 0n);
    expect(body.totals.operations).toBe(72);
    for (const grouping of ["by_status", "by_asset_class", "by_spv"]) {
      expect(
        body[grouping].reduce((n: number, r: any) => n + r.count, 0),
        grouping,
      ).toBe(72);
      expect(sum(body[grouping], "montant_engage"), grouping).toBe(
        BigInt(body.totals.montant_engage.replace(".", "")),
      );
      for (const row of body[grouping]) expect(row.encours).toMatch(DECIMAL);
    }
    expect(body.by_spv.find((r: any) => r.spv_id !== null).spv_name).toEqual(expect.any(String));
  });

  it("exports INREV as a real XLSX workbook", async () => {
    const reply = await env.client.get("/reports/inrev");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe(
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    );
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(reply.body);
    expect(workbook.worksheets.map((w) => w.name)).toEqual(["Vehicle", "Assets", "Notes"]);
    expect(workbook.getWorksheet("Assets")!.rowCount).toBe(73);
    expect(workbook.getWorksheet("Vehicle")!.getCell("B2").value).toBe("Aurore Capital Partners");
  });
});

describe("workflows", () => {
  it("previews recommendations (a read), filtered by operation", async () => {
    const all = (await env.client.call("POST", "/workflows/recommendations/preview")).body;
    expect(all.items.length).toBe(5);
    expect(all.items.every((r: any) => r.status !== "applied")).toBe(true);
    const withApplied = (
      await env.client.call("POST", "/workflows/recommendations/preview", {
        body: { include_applied: true },
      })
    ).body;
    expect(withApplied.total).toBe(6);
    const op = all.items[0].operation_ids[0];
    const filtered = (
      await env.client.call("POST", "/workflows/recommendations/preview", {
        body: { operation_ids: [op] },
      })
    ).body;
    expect(filtered.items.every((r: any) => r.operation_ids.includes(op))).toBe(true);
  });

  it("creates a workflow from a validated recommendation once, and refuses the others", async () => {
    const recs = env.data.recommendations;
    const validated = recs.find((r) => r.status === "validated")!;
    const created = await env.client.write(
      "POST",
      `/workflows/recommendations/${validated.id}/workflow`,
      undefined,
    );
    expect(created.status).toBe(201);
    expect(Object.keys(created.body)).toEqual([
      "key",
      "name",
      "description",
      "processing_family",
      "schedule",
      "enabled",
      "is_custom",
      "is_editable",
      "is_deletable",
      "can_toggle",
      "origin",
      "business_scope",
      "expected_effect",
      "processing_types",
      "preset_key",
      "state",
      "schedule_mode",
      "configuration",
      "metadata",
      "last_run_at",
      "next_run_at",
      "last_error",
    ]);
    expect(created.body).toMatchObject({
      preset_key: validated.preset_key,
      state: "active",
      origin: "system",
    });
    const twice = await env.client.write(
      "POST",
      `/workflows/recommendations/${validated.id}/workflow`,
      undefined,
    );
    expect(twice.status).toBe(409);
    expect(twice.body.reason_code).toBe("recommendation_already_applied");
    const proposed = recs.find((r) => r.status === "proposed")!;
    const notValidated = await env.client.write(
      "POST",
      `/workflows/recommendations/${proposed.id}/workflow`,
      { enabled: false },
    );
    expect(notValidated.body.reason_code).toBe("recommendation_not_validated");
    const unknown = await env.client.write(
      "POST",
      "/workflows/recommendations/reco_missing/workflow",
      undefined,
    );
    expect(unknown.status).toBe(404);
  });
});

describe("the delegated user", () => {
  it("reads the profile, views and dashboards; created dashboards carry a share_token", async () => {
    const me = (await env.client.get("/users/me")).body;
    expect(me).toMatchObject({
      id: "usr_camille_martin",
      status: "approved",
      entity_id: expect.stringMatching(UUID),
    });
    const views = (await env.client.get("/users/me/saved-views")).body;
    for (const view of views.items) {
      expect(view).toMatchObject({
        user_id: me.id,
        type: expect.any(String),
        sort: expect.any(Array),
      });
    }
    const dashboard = await env.client.write("POST", "/users/me/custom-dashboards", {
      name: "Suivi SPV",
      description: null,
    });
    expect(dashboard.status).toBe(201);
    for (const field of [
      "id",
      "name",
      "description",
      "user_id",
      "layout",
      "filters",
      "is_shared",
      "share_token",
      "created_at",
      "updated_at",
    ]) {
      expect(dashboard.body, field).toHaveProperty(field);
    }
    expect(dashboard.body.share_token).toMatch(/^shr_/);
    expect(dashboard.body).toMatchObject({ is_shared: false, can_edit: true, can_manage: true });
  });

  it("creates and updates a saved view", async () => {
    const created = await env.client.write("POST", "/users/me/saved-views", {
      name: "Résidentiel en travaux",
      type: "operations",
      filters: { statut: ["travaux"], classe_actif: ["residentiel"] },
      columns: ["name", "encours"],
      sort: [{ sort_by: "encours", sort_order: "desc" }],
    });
    expect(created.status).toBe(201);
    const updated = await env.client.write("PATCH", `/users/me/saved-views/${created.body.id}`, {
      color: "red",
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      color: "red",
      name: "Résidentiel en travaux",
      filters: created.body.filters,
    });
  });
});
