import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RISK_MOVES } from "../src/handlers/operators.js";
import type { RiskStatus } from "../src/models/operators.js";
import { checkSiren } from "../src/siren.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

// Each test starts from the seeded data: no test sees another one's writes.
const env = sandboxPerTest({ rateLimit: false });

const put = (path: string, body: unknown) =>
  env.client.call("PUT", path, { body, idempotencyKey: `test-${randomUUID()}` });
const VALID_SIREN = "732829320";

describe("operator writes", () => {
  it("create an operator, its label following its score, and find it by name", async () => {
    const reply = await env.client.write("POST", "/operateurs", {
      name: "Savoie Habitat Promotion",
      siren: VALID_SIREN,
      type: "promoteur",
      data: { effectif: 24, chiffre_affaires: "18500.00" },
      reputation_gouvernance_score: 55,
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      siren: VALID_SIREN,
      reputation_gouvernance_label: "À surveiller",
      litiges_en_cours: false,
      external_id: null,
      data: { effectif: 24, chiffre_affaires: "18500.00" },
    });
    const found = await env.client.get("/operateurs", {
      query: { name: "savoie habitat promotion" },
    });
    expect(found.body.items[0].id).toBe(reply.body.id);
  });

  it("verify the check digit of siren and siren_mere, and keep siren unique", async () => {
    const typo = await env.client.write("POST", "/operateurs", {
      name: "Chablais Promotion",
      siren: "732829321",
      siren_mere: "356000001",
    });
    expect(typo.status).toBe(422);
    expect(typo.body.reason_code).toBe("siren_invalid");
    expect(typo.body.errors.map((e: any) => e.field)).toEqual(["siren", "siren_mere"]);
    const seeded = env.data.operators.find((o) => o.siren && checkSiren(o.siren).valid)!;
    const twin = await env.client.write("POST", "/operateurs", {
      name: "Double",
      siren: seeded.siren,
    });
    expect(twin.status).toBe(409);
    expect(twin.body.reason_code).toBe("siren_taken");
    const short = await env.client.write("POST", "/operateurs", {
      name: "Court",
      siren: "73282932",
    });
    expect(short.body).toMatchObject({ reason_code: "validation_failed" });
  });

  it("check data against the operators' field definitions and merge it key by key", async () => {
    const operator = env.data.operators[0]!;
    const unknown = await env.client.write("PATCH", `/operateurs/${operator.id}`, {
      data: { surface_plancher: "1200.0" },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ reason_code: "unknown_business_field" });
    expect(unknown.body.errors[0].field).toBe("data.surface_plancher");
    const unavailable = await env.client.write("PATCH", `/operateurs/${operator.id}`, {
      data: { notation_banque_de_france: "3+" },
    });
    expect(unavailable.body.reason_code).toBe("business_field_unavailable");
    const wrongType = await env.client.write("PATCH", `/operateurs/${operator.id}`, {
      data: { effectif: "vingt" },
    });
    expect(wrongType.body.errors[0]).toMatchObject({
      field: "data.effectif",
      rule: "type integer",
    });
    const merged = await env.client.write("PATCH", `/operateurs/${operator.id}`, {
      data: { effectif: 30, operations_livrees: null },
    });
    expect(merged.status).toBe(200);
    expect(merged.body.data.effectif).toBe(30);
    expect(merged.body.data).not.toHaveProperty("operations_livrees");
    expect(merged.body.data.chiffre_affaires).toBe(operator.data.chiffre_affaires);
  });

  it("keep litigation details to operators with ongoing disputes", async () => {
    const disputed = env.data.operators.find((o) => o.litiges_en_cours)!;
    const reply = await env.client.write("PATCH", `/operateurs/${disputed.id}`, {
      litiges_en_cours: false,
    });
    expect(reply.status).toBe(422);
    expect(reply.body.errors[0].field).toBe("litiges_detail");
    const settled = await env.client.write("PATCH", `/operateurs/${disputed.id}`, {
      litiges_en_cours: false,
      litiges_detail: null,
    });
    expect(settled.body).toMatchObject({ litiges_en_cours: false, litiges_detail: null });
  });
});

describe("operator synchronisation by external id", () => {
  it("creates an unknown external id (201), updates a known one (200), leaves unsent fields", async () => {
    const created = await put("/operateurs/external/CRM-OPR-9001", {
      name: "Léman Aménagement",
      siren: VALID_SIREN,
      responsable_interne: "Camille Martin",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ external_id: "CRM-OPR-9001", name: "Léman Aménagement" });
    const updated = await put("/operateurs/external/CRM-OPR-9001", {
      name: "Léman Aménagement SAS",
      type: "promoteur",
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: created.body.id,
      name: "Léman Aménagement SAS",
      siren: VALID_SIREN,
      responsable_interne: "Camille Martin",
    });
    const read = await env.client.get("/operateurs/external/CRM-OPR-9001");
    expect(read.body.id).toBe(created.body.id);
    const typo = await put("/operateurs/external/CRM-OPR-9002", { name: "X", siren: "732829321" });
    expect(typo.body.reason_code).toBe("siren_invalid");
    expect(env.data.operators.some((o) => o.external_id === "CRM-OPR-9002")).toBe(false);
  });
});

describe("third-party risks", () => {
  const riskIn = (status: RiskStatus) => {
    const risk = env.data.operatorRisks.find((r) => r.status === status);
    if (!risk) throw new Error(`no seeded risk is ${status}`);
    return risk;
  };
  const move = (risk: { id: string; operateur_id: string }, body: unknown) =>
    env.client.write(
      "PATCH",
      `/operateurs/${risk.operateur_id}/third-party-risks/${risk.id}`,
      body,
    );

  it("follow from the operators' records, most severe first", async () => {
    const risks = env.data.operatorRisks;
    expect(new Set(risks.map((r) => r.status))).toEqual(
      new Set(["identifie", "en_traitement", "maitrise", "clos"]),
    );
    const typo = env.data.operators.find((o) => o.siren && !checkSiren(o.siren).valid)!;
    const { body } = await env.client.get(`/operateurs/${typo.id}/third-party-risks`);
    expect(body.items[0]).toMatchObject({ category: "conformite", level: "critique" });
    const ranks = body.items.map((r: any) =>
      ["critique", "eleve", "modere", "faible"].indexOf(r.level),
    );
    expect(ranks).toEqual([...ranks].sort());
  });

  it("are recorded as identified, by the key's service account", async () => {
    const operator = env.data.operators[1]!;
    const reply = await env.client.write("POST", `/operateurs/${operator.id}/third-party-risks`, {
      category: "financier",
      level: "eleve",
      title: "Retard de paiement d'un sous-traitant",
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      status: "identifie",
      created_by: "apikey:sandboxdemo",
      identified_at: new Date().toISOString().slice(0, 10),
    });
  });

  const allowed = Object.entries(RISK_MOVES).flatMap(([to, froms]) =>
    froms.map((from) => [from as RiskStatus, to as RiskStatus] as const),
  );

  it.each(allowed)("move from %s to %s", async (from, to) => {
    const risk = riskIn(from);
    const body =
      to === "maitrise" ? { status: to, mitigation: "Caution obtenue." } : { status: to };
    const reply = await move(risk, body);
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe(to);
    expect(reply.body.closed_at === null).toBe(to !== "clos");
  });

  it("refuse a move out of clos and skipped steps (409), and control without measures (422)", async () => {
    const reopened = await move(riskIn("clos"), { status: "en_traitement" });
    expect(reopened.status).toBe(409);
    expect(reopened.body.reason_code).toBe("invalid_transition");
    const skipped = await move(riskIn("identifie"), { status: "maitrise", mitigation: "x" });
    expect(skipped.status).toBe(409);
    const treated = riskIn("en_traitement");
    const bare = await move(treated, { status: "maitrise", mitigation: null });
    expect(bare.status).toBe(422);
    expect(bare.body.errors[0].field).toBe("mitigation");
    const other = env.data.operators.find((o) => o.id !== treated.operateur_id)!;
    const wrongOperator = await env.client.write(
      "PATCH",
      `/operateurs/${other.id}/third-party-risks/${treated.id}`,
      { level: "faible" },
    );
    expect(wrongOperator.body.reason_code).toBe("risk_not_found");
  });
});
