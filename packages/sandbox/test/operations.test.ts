import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { OPERATION_MOVES } from "../src/handlers/operation-writes.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

// Each test starts from the seeded data: no test sees another one's writes.
const env = sandboxPerTest({ rateLimit: false });

const operationIn = (status: string) => {
  const operation = env.data.operations.find((o) => o.status === status);
  if (!operation) throw new Error(`no seeded operation is ${status}`);
  return operation;
};
const put = (path: string, body: unknown) =>
  env.client.call("PUT", path, { body, idempotencyKey: `test-${randomUUID()}` });
const patch = (id: string, body: unknown) => env.client.write("PATCH", `/operations/${id}`, body);

describe("operation creation", () => {
  it("starts at version 1, derives its phase, fund and outstanding amount, and is listed", async () => {
    const spv = env.data.spvs.find((s) => s.status === "active")!;
    const reply = await env.client.write("POST", "/operations", {
      name: "Les Jardins de l'Écluse – Annecy",
      status: "instruction",
      spv_id: spv.id,
      classe_actif: "residentiel",
      statut_operationnel: ["permis_obtenu"],
      financial_summary: {
        montant_engage: "4200000.00",
        montant_appele: 1000000,
        montant_rembourse: "0",
      },
      data: { nombre_lots: 42, ville: "Annecy" },
      kpi_snapshot: { as_of: "2026-09-30", valeur_venale: 9800000, dscr: 1.4 },
      external_id: "PMS-OPE-90001",
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      version: 1,
      phase: "origination",
      fond_id: spv.fond_id,
      statut_interne: "nominal",
      external_id: "PMS-OPE-90001",
      data: { nombre_lots: 42, ville: "Annecy" },
      kpi_snapshot: { as_of: "2026-09-30", valeur_venale: "9800000", dscr: 1.4 },
    });
    expect(reply.body.financial_summary).toMatchObject({
      montant_appele: "1000000",
      encours: "1000000.00",
      devise: "EUR",
    });
    const listed = await env.client.get("/operations", {
      query: { name: "les jardins de l'écluse – annecy" },
    });
    expect(listed.body.items).toHaveLength(1);
    expect(listed.body.items[0]).not.toHaveProperty("external_id");
    const byExternal = await env.client.get("/operations/external/PMS-OPE-90001");
    expect(byExternal.body.id).toBe(reply.body.id);
  });

  it("refuses taken names and external ids, unknown codes, and SPVs in liquidation", async () => {
    const seeded = env.data.operations.find((o) => o.external_id !== null)!;
    const cases = [
      [{ name: ` ${seeded.name.toUpperCase()} ` }, 409, "operation_name_taken"],
      [{ name: "Nouvelle", external_id: seeded.external_id }, 409, "external_id_taken"],
      [{ name: "Nouvelle", status: "en_cours" }, 422, "unknown_taxonomy_code"],
      [
        { name: "Nouvelle", statut_operationnel: ["permis_obtenu", "fini"] },
        422,
        "unknown_taxonomy_code",
      ],
      [
        { name: "Nouvelle", spv_id: env.data.spvs.find((s) => s.status === "in_liquidation")!.id },
        409,
        "spv_in_liquidation",
      ],
      [
        {
          name: "Nouvelle",
          financial_summary: { montant_engage: "100.00", montant_appele: "200.00" },
        },
        422,
        "amounts_inconsistent",
      ],
    ] as const;
    for (const [body, status, reason] of cases) {
      const reply = await env.client.write("POST", "/operations", body);
      expect(reply.status, JSON.stringify(body)).toBe(status);
      expect(reply.body.reason_code).toBe(reason);
    }
  });
});

describe("operation updates at a version", () => {
  it("apply at the current version and raise it; a stale version is refused with 409", async () => {
    const operation = operationIn("travaux");
    const version = operation.version;
    const first = await patch(operation.id, { version, sous_classe_actif: "Résidence seniors" });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      version: version + 1,
      sous_classe_actif: "Résidence seniors",
    });
    // A second client that read the operation before the first change.
    const stale = await patch(operation.id, { version, description: "Autre changement" });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason_code: "version_conflict",
      route_id: "operation_update",
    });
    expect(stale.body.detail).toContain(`version ${version + 1}`);
    expect(operation.description).not.toBe("Autre changement");
    const ahead = await patch(operation.id, { version: version + 5, description: "x" });
    expect(ahead.body.reason_code).toBe("version_conflict");
    const missing = await patch(operation.id, { description: "x" });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0]).toMatchObject({ field: "version", rule: "required" });
    const nothing = await patch(operation.id, { version: version + 1 });
    expect(nothing.body.errors[0]).toMatchObject({ field: "body", rule: "min 1 field" });
  });

  it("keep KPIs inside kpi_snapshot, merged, amounts as strings, debts adding up", async () => {
    const operation = operationIn("commercialisation");
    const inData = await patch(operation.id, {
      version: operation.version,
      data: { noi: "120000.00" },
    });
    expect(inData.status).toBe(422);
    expect(inData.body).toMatchObject({ reason_code: "kpi_key_in_data" });
    expect(inData.body.errors[0]).toMatchObject({
      field: "data.noi",
      rule: "belongs in kpi_snapshot",
    });
    const currency = await patch(operation.id, {
      version: operation.version,
      kpi_snapshot: { devise: "USD" },
    });
    expect(currency.body.errors[0]).toMatchObject({
      field: "kpi_snapshot.devise",
      rule: "unknown field",
    });
    const senior = operation.kpi_snapshot.crd_senior as string;
    const mismatch = await patch(operation.id, {
      version: operation.version,
      kpi_snapshot: { crd_total: "1.00" },
    });
    expect(mismatch.body.reason_code).toBe("kpi_inconsistent");
    const reply = await patch(operation.id, {
      version: operation.version,
      kpi_snapshot: { noi: 250000.5, crd_mezzanine: "0.00", crd_total: senior },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.kpi_snapshot).toMatchObject({
      noi: "250000.5",
      crd_total: senior,
      crd_mezzanine: "0.00",
      periode: "12 mois glissants",
    });
    const fraction = await patch(operation.id, {
      version: reply.body.version,
      kpi_snapshot: { noi: 0.123 },
    });
    expect(fraction.status).toBe(422);
  });

  const allowed = Object.entries(OPERATION_MOVES).flatMap(([to, froms]) =>
    froms.map((from) => [from, to] as const),
  );

  it.each(allowed)("move an operation from %s to %s, its phase following", async (from, to) => {
    const operation = operationIn(from);
    const reply = await patch(operation.id, { version: operation.version, status: to });
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe(to);
    const phases: Record<string, string> = {
      travaux: "execution",
      remboursee: "terminee",
      abandonnee: "terminee",
    };
    if (phases[to]) expect(reply.body.phase).toBe(phases[to]);
  });

  it("refuse skipped steps and moves out of a final status (409 invalid_transition)", async () => {
    const early = operationIn("sourcing");
    const skipped = await patch(early.id, { version: early.version, status: "travaux" });
    expect(skipped.status).toBe(409);
    expect(skipped.body.reason_code).toBe("invalid_transition");
    const closed = operationIn("cloturee");
    const version = closed.version;
    const reopened = await patch(closed.id, { version, status: "livraison" });
    expect(reopened.status).toBe(409);
    expect(closed).toMatchObject({ status: "cloturee", version });
  });
});

describe("operation synchronisation by external id", () => {
  it("creates (201), updates (200, version up), and leaves an identical record as it is", async () => {
    const created = await put("/operations/external/PMS-OPE-90002", {
      name: "Îlot Confluence – Lyon",
      status: "travaux",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      version: 1,
      phase: "execution",
      external_id: "PMS-OPE-90002",
    });
    const same = await put("/operations/external/PMS-OPE-90002", {
      name: "Îlot Confluence – Lyon",
    });
    expect(same.status).toBe(200);
    expect(same.body.version).toBe(1);
    const moved = await put("/operations/external/PMS-OPE-90002", {
      name: "Îlot Confluence – Lyon",
      status: "livraison",
      version: 1,
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ version: 2, status: "livraison", phase: "sortie" });
  });

  it("may jump several steps forward, never back to an earlier phase, and checks a version when sent", async () => {
    const operation = env.data.operations.find((o) => o.status === "instruction" && o.external_id)!;
    const path = `/operations/external/${operation.external_id}`;
    const stale = await put(path, {
      name: operation.name,
      status: "travaux",
      version: operation.version - 1,
    });
    expect(stale.body.reason_code).toBe("version_conflict");
    const jumped = await put(path, { name: operation.name, status: "livraison" });
    expect(jumped.status).toBe(200);
    expect(jumped.body.status).toBe("livraison");
    const back = await put(path, { name: operation.name, status: "instruction" });
    expect(back.status).toBe(409);
    expect(back.body.reason_code).toBe("invalid_transition");
    expect(back.body.detail).toContain("no sequence of allowed moves");
  });
});
