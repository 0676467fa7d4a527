import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

// Each test starts from the seeded data: no test sees another one's writes.
const env = sandboxPerTest({ rateLimit: false });

const send = (method: "PUT" | "DELETE", path: string, body?: unknown) =>
  env.client.call(method, path, { body, idempotencyKey: `test-${randomUUID()}` });

const newFund = async () => {
  const reply = await env.client.write("POST", "/fonds", {
    name: "Aurore Résidentiel Durable",
    strategy: "Dette senior résidentiel bas carbone",
    vintage_year: 2026,
    target_size: "75000000.00",
  });
  expect(reply.status).toBe(201);
  return reply.body;
};

describe("funds", () => {
  it("are listed by vintage, each with its SPVs", async () => {
    const { body } = await env.client.get("/fonds");
    expect(body.total).toBe(6);
    const vintages = body.items.map((f: any) => f.vintage_year);
    expect(vintages).toEqual([...vintages].sort());
    const fund = body.items[0];
    const spvs = await env.client.get(`/fonds/${fund.id}/spvs`);
    expect(spvs.body.total).toBeGreaterThan(0);
    for (const spv of spvs.body.items) expect(spv.fond_id).toBe(fund.id);
    const missing = await env.client.get(`/fonds/${randomUUID()}`);
    expect(missing.body.reason_code).toBe("fund_not_found");
  });

  it("start investing, then harvest, then close: each move, and none back", async () => {
    const fund = await newFund();
    expect(fund).toMatchObject({ status: "investing", currency: "EUR" });
    const harvesting = await env.client.write("PATCH", `/fonds/${fund.id}`, {
      status: "harvesting",
    });
    expect(harvesting.body.status).toBe("harvesting");
    const back = await env.client.write("PATCH", `/fonds/${fund.id}`, { status: "investing" });
    expect(back.status).toBe(409);
    expect(back.body.reason_code).toBe("invalid_transition");
    expect(back.body.detail).toContain("never allowed");
    const closed = await env.client.write("PATCH", `/fonds/${fund.id}`, { status: "closed" });
    expect(closed.body.status).toBe("closed");
  });

  it("close only once none of their SPVs is active, and keep unique names", async () => {
    const harvesting = env.data.funds.find((f) => f.status === "harvesting")!;
    const reply = await env.client.write("PATCH", `/fonds/${harvesting.id}`, { status: "closed" });
    expect(reply.status).toBe(409);
    expect(reply.body.reason_code).toBe("fund_has_active_spvs");
    await newFund();
    const twin = await env.client.write("POST", "/fonds", {
      name: " aurore résidentiel durable ",
      strategy: "Autre",
      vintage_year: 2027,
      target_size: "1000000.00",
    });
    expect(twin.status).toBe(409);
    expect(twin.body.reason_code).toBe("fund_name_taken");
  });
});

describe("SPV synchronisation by external id", () => {
  const body = (fondId: string, siren = "732829320") => ({
    name: "SCI Aurore Savoie",
    legal_form: "SCI",
    siren,
    fond_id: fondId,
  });

  it("creates an unknown external id (201), updates a known one (200), and says nothing changed when nothing did", async () => {
    const fund = env.data.funds[0]!;
    const created = await send("PUT", "/spvs/external/SPV-EXT-900", body(fund.id));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ external_id: "SPV-EXT-900", status: "active" });
    const again = await send("PUT", "/spvs/external/SPV-EXT-900", body(fund.id));
    expect(again.status).toBe(200);
    expect(again.body.updated_at).toBe(created.body.updated_at);
    const renamed = await send("PUT", "/spvs/external/SPV-EXT-900", {
      ...body(fund.id),
      name: "SCI Aurore Savoie Mont-Blanc",
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      id: created.body.id,
      name: "SCI Aurore Savoie Mont-Blanc",
    });
    const read = await env.client.get("/spvs/external/SPV-EXT-900");
    expect(read.body.id).toBe(created.body.id);
    expect((await env.client.get("/spvs/external/NOPE-1")).body.reason_code).toBe("spv_not_found");
  });

  it("goes into liquidation once and never back", async () => {
    const spv = env.data.spvs.find((s) => s.status === "active")!;
    const { name, legal_form, siren, fond_id } = spv;
    const wound = await send("PUT", `/spvs/external/${spv.external_id}`, {
      name,
      legal_form,
      siren,
      fond_id,
      status: "in_liquidation",
    });
    expect(wound.status).toBe(200);
    expect(wound.body.status).toBe("in_liquidation");
    const revived = await send("PUT", `/spvs/external/${spv.external_id}`, {
      name,
      legal_form,
      siren,
      fond_id,
      status: "active",
    });
    expect(revived.status).toBe(409);
    expect(revived.body.reason_code).toBe("invalid_transition");
  });

  it("verifies the SIREN's check digit and keeps it unique; the fund must exist and be open", async () => {
    const fund = env.data.funds[0]!;
    const typo = await send("PUT", "/spvs/external/SPV-EXT-901", body(fund.id, "732829321"));
    expect(typo.status).toBe(422);
    expect(typo.body).toMatchObject({ reason_code: "siren_invalid" });
    expect(typo.body.errors[0]).toMatchObject({ field: "siren", rule: "Luhn checksum" });
    const taken = await send(
      "PUT",
      "/spvs/external/SPV-EXT-901",
      body(fund.id, env.data.spvs[0]!.siren),
    );
    expect(taken.status).toBe(409);
    expect(taken.body.reason_code).toBe("siren_taken");
    const nowhere = await send("PUT", "/spvs/external/SPV-EXT-901", body(randomUUID()));
    expect(nowhere.body.reason_code).toBe("reference_not_found");
    const closed = await newFund();
    await env.client.write("PATCH", `/fonds/${closed.id}`, { status: "harvesting" });
    await env.client.write("PATCH", `/fonds/${closed.id}`, { status: "closed" });
    const late = await send("PUT", "/spvs/external/SPV-EXT-901", body(closed.id));
    expect(late.status).toBe(409);
    expect(late.body.reason_code).toBe("fund_closed");
  });

  it("moves the attached operations to the SPV's new fund", async () => {
    const spv = env.data.spvs.find(
      (s) => s.status === "active" && env.data.operations.some((o) => o.spv_id === s.id),
    )!;
    const other = env.data.funds.find((f) => f.id !== spv.fond_id && f.status !== "closed")!;
    const attached = env.data.operations.filter((o) => o.spv_id === spv.id);
    const versions = attached.map((o) => o.version);
    const { name, legal_form, siren } = spv;
    const moved = await send("PUT", `/spvs/external/${spv.external_id}`, {
      name,
      legal_form,
      siren,
      fond_id: other.id,
    });
    expect(moved.status).toBe(200);
    attached.forEach((o, i) => {
      expect(o.fond_id).toBe(other.id);
      expect(o.version).toBe(versions[i]! + 1);
    });
  });
});

describe("SPV attachments", () => {
  it("attach an operation without SPV, list it, detach it, with the operation's version going up", async () => {
    const spv = env.data.spvs.find((s) => s.status === "active")!;
    const free = env.data.operations.find((o) => o.spv_id === null)!;
    const version = free.version;
    const attached = await env.client.write("POST", `/spvs/${spv.id}/attachments`, {
      operation_id: free.id,
    });
    expect(attached.status).toBe(201);
    expect(attached.body).toMatchObject({
      spv_id: spv.id,
      operation_id: free.id,
      operation_version: version + 1,
    });
    const detail = await env.client.get(`/operations/${free.id}`);
    expect(detail.body).toMatchObject({ spv_id: spv.id, fond_id: spv.fond_id });
    const listed = await env.client.get(`/spvs/${spv.id}/attachments`, { query: { limit: 200 } });
    expect(listed.body.items.map((a: any) => a.operation_id)).toContain(free.id);
    const again = await env.client.write("POST", `/spvs/${spv.id}/attachments`, {
      operation_id: free.id,
    });
    expect(again.body.reason_code).toBe("already_attached");
    const detached = await send("DELETE", `/spvs/${spv.id}/attachments/${free.id}`);
    expect(detached.status).toBe(204);
    expect(free).toMatchObject({ spv_id: null, fond_id: null, version: version + 2 });
    const gone = await send("DELETE", `/spvs/${spv.id}/attachments/${free.id}`);
    expect(gone.body.reason_code).toBe("attachment_not_found");
  });

  it("refuses an operation attached elsewhere, and any new one in liquidation", async () => {
    const spv = env.data.spvs.find((s) => s.status === "active")!;
    const elsewhere = env.data.operations.find((o) => o.spv_id !== null && o.spv_id !== spv.id)!;
    const taken = await env.client.write("POST", `/spvs/${spv.id}/attachments`, {
      operation_id: elsewhere.id,
    });
    expect(taken.status).toBe(409);
    expect(taken.body.reason_code).toBe("attached_to_another_spv");
    const wound = env.data.spvs.find((s) => s.status === "in_liquidation")!;
    const free = env.data.operations.find((o) => o.spv_id === null)!;
    const late = await env.client.write("POST", `/spvs/${wound.id}/attachments`, {
      operation_id: free.id,
    });
    expect(late.status).toBe(409);
    expect(late.body.reason_code).toBe("spv_in_liquidation");
  });
});
