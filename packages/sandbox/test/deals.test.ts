import { describe, expect, it } from "vitest";
import { DEAL_MOVES } from "../src/handlers/deals.js";
import type { DealStatus } from "../src/models/deals.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

// Each test starts from the seeded data: the pipeline is about state.
const env = sandboxPerTest({ rateLimit: false });

const deals = () => env.data.deals;
const dealIn = (status: DealStatus) => {
  const deal = deals().find((d) => d.status === status);
  if (!deal) throw new Error(`no seeded deal is ${status}`);
  return deal;
};
const patch = (id: string, body: unknown) => env.client.write("PATCH", `/deals/${id}`, body);

describe("deal creation", () => {
  it("enters the pipeline at sourcing, dated today, and is listed", async () => {
    const operator = env.data.operators[0]!;
    const reply = await env.client.write("POST", "/deals", {
      name: "Acquisition foncier Annecy – Belvédère",
      montant_estime: "3500000.00",
      classe_actif: "residentiel",
      operateur_id: operator.id.toUpperCase(),
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      status: "sourcing",
      montant_estime: "3500000.00",
      operateur_id: operator.id,
      date_sourcing: new Date().toISOString().slice(0, 10),
      date_closing_prevue: null,
    });
    const listed = await env.client.get("/deals", { query: { status: "sourcing", limit: 200 } });
    expect(listed.body.items.map((d: any) => d.id)).toContain(reply.body.id);
  });

  it("refuses a status beyond analyse, unknown codes and links, and a closing before sourcing", async () => {
    const refusals = [
      [{ name: "X", status: "comite" }, "validation_failed", "status"],
      [{ name: "X", classe_actif: "chateaux" }, "unknown_taxonomy_code", "classe_actif"],
      [
        { name: "X", operation_id: "0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40" },
        "reference_not_found",
        "operation_id",
      ],
      [
        { name: "X", date_sourcing: "2026-05-01", date_closing_prevue: "2026-04-01" },
        "validation_failed",
        "date_closing_prevue",
      ],
      [{ name: "X", montant_estime: "-10.00" }, "validation_failed", "montant_estime"],
    ] as const;
    for (const [body, reason, field] of refusals) {
      const reply = await env.client.write("POST", "/deals", body);
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.body.reason_code).toBe(reason);
      expect(reply.body.errors[0].field).toBe(field);
    }
    expect(deals()).toHaveLength(25);
  });
});

describe("the deal pipeline", () => {
  const allowed = Object.entries(DEAL_MOVES).flatMap(([to, froms]) =>
    froms.map((from) => [from as DealStatus, to as DealStatus] as const),
  );

  it.each(allowed)("moves a deal from %s to %s", async (from, to) => {
    const deal = dealIn(from);
    const reply = await patch(deal.id, { status: to });
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe(to);
    expect(Date.parse(reply.body.updated_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("refuses any move out of abandonne, and skipped steps, with 409 invalid_transition", async () => {
    const abandoned = dealIn("abandonne");
    const out = await patch(abandoned.id, { status: "sourcing" });
    expect(out.status).toBe(409);
    expect(out.body).toMatchObject({ reason_code: "invalid_transition", route_id: "deal_update" });
    expect(out.body.detail).toContain("abandonne");
    const skipped = await patch(dealIn("sourcing").id, { status: "comite" });
    expect(skipped.status).toBe(409);
    expect(skipped.body.detail).toContain("allowed only from due_diligence, closing");
    expect(abandoned.status).toBe("abandonne");
  });

  it("leaves absent fields alone, clears null ones, and refuses an empty change", async () => {
    const deal = deals().find((d) => d.description !== null && d.montant_estime !== null)!;
    const reply = await patch(deal.id, { description: null, responsable: "Thomas Petit" });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      description: null,
      responsable: "Thomas Petit",
      montant_estime: deal.montant_estime,
    });
    const empty = await patch(deal.id, {});
    expect(empty.status).toBe(422);
    expect(empty.body.errors[0]).toMatchObject({ field: "body", rule: "min 1 field" });
  });
});

describe("deal notes", () => {
  it("are seeded on every deal, newest first, about the steps it went through", async () => {
    const data = env.data;
    for (const deal of data.deals)
      expect(
        data.dealNotes.some((n) => n.deal_id === deal.id),
        deal.name,
      ).toBe(true);
    const abandoned = dealIn("abandonne");
    const { body } = await env.client.get(`/deals/${abandoned.id}/notes`);
    expect(body.total).toBeGreaterThan(0);
    const dates = body.items.map((n: any) => n.date);
    expect(dates).toEqual([...dates].sort().reverse());
  });

  it("are added by the key's service account and changed field by field", async () => {
    const deal = dealIn("comite");
    const created = await env.client.write("POST", `/deals/${deal.id}/notes`, {
      content: "Comité du jour : accord sous réserve de la GFA.",
      note_type: "comite",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ deal_id: deal.id, user_id: "apikey:sandboxdemo" });
    const changed = await env.client.write("PATCH", `/deals/${deal.id}/notes/${created.body.id}`, {
      content: "Comité du jour : accord, GFA reçue.",
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      note_type: "comite",
      content: "Comité du jour : accord, GFA reçue.",
    });
    const elsewhere = await env.client.write(
      "PATCH",
      `/deals/${dealIn("closing").id}/notes/${created.body.id}`,
      { content: "x" },
    );
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.reason_code).toBe("deal_note_not_found");
    const nulled = await env.client.write("PATCH", `/deals/${deal.id}/notes/${created.body.id}`, {
      content: null,
    });
    expect(nulled.status).toBe(422);
  });
});
