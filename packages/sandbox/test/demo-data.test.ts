import { describe, expect, it } from "vitest";
import { buildDemoData, DEMO_USERS } from "../src/data/demo.js";
import { buildSandboxData } from "../src/data/index.js";
import { fromCents, toCents } from "../src/money.js";
import { checkSiren, withCheckDigit } from "../src/siren.js";

const data = buildDemoData({ seed: "aurore-demo", today: "2026-11-21" });

describe("demo data", () => {
  it("is deterministic for a seed and a date, and differs for another seed", () => {
    expect(buildDemoData({ seed: "aurore-demo", today: "2026-11-21" })).toEqual(data);
    const other = buildDemoData({ seed: "another", today: "2026-11-21" });
    expect(other.operations[0]!.id).not.toBe(data.operations[0]!.id);
  });

  it("has at least 60 operations spread over every operation_status code", () => {
    expect(data.operations.length).toBeGreaterThanOrEqual(60);
    const codes = data.taxonomies
      .find((d) => d.dimension === "operation_status")!
      .values.map((v) => v.code);
    expect(new Set(data.operations.map((o) => o.status))).toEqual(new Set(codes));
    expect(new Set(data.operations.map((o) => o.name)).size).toBe(data.operations.length);
  });

  it("has 12 SPVs over 6 funds, and consistent links", () => {
    expect(data.spvs).toHaveLength(12);
    expect(data.funds).toHaveLength(6);
    const spvs = new Map(data.spvs.map((s) => [s.id, s]));
    const operators = new Set(data.operators.map((o) => o.id));
    const fundIds = new Set(data.funds.map((f) => f.id));
    for (const spv of data.spvs) expect(fundIds.has(spv.fond_id)).toBe(true);
    for (const o of data.operations) {
      if (o.spv_id) expect(o.fond_id).toBe(spvs.get(o.spv_id)!.fond_id);
      if (o.operateur_id) expect(operators.has(o.operateur_id)).toBe(true);
    }
    const operationIds = new Set(data.operations.map((o) => o.id));
    for (const d of data.deals)
      if (d.operation_id) expect(operationIds.has(d.operation_id)).toBe(true);
    for (const e of data.calendarEvents)
      if (e.operation_id) expect(operationIds.has(e.operation_id)).toBe(true);
    for (const n of data.notes) expect(operationIds.has(n.operation_id)).toBe(true);
  });

  it("has 20 operators with valid SIRENs and a few mistyped ones", () => {
    const valid = data.operators.filter((o) => o.siren && checkSiren(o.siren).valid);
    const invalid = data.operators.filter((o) => o.siren && !checkSiren(o.siren).valid);
    expect(valid).toHaveLength(20);
    expect(invalid.length).toBeGreaterThanOrEqual(3);
  });

  it("has 25 deals over every pipeline status and 50 calendar events", () => {
    expect(data.deals).toHaveLength(25);
    expect(new Set(data.deals.map((d) => d.status)).size).toBe(6);
    expect(data.calendarEvents).toHaveLength(50);
  });

  it("has unread critical notifications, six taxonomies, field definitions with units, recommendations", () => {
    expect(data.notifications.some((n) => !n.read && n.severity === "critical")).toBe(true);
    expect(data.taxonomies).toHaveLength(6);
    expect(data.fieldDefinitions.filter((d) => d.unit !== null).length).toBeGreaterThan(5);
    expect(data.recommendations.map((r) => r.status)).toEqual(
      expect.arrayContaining(["validated", "proposed", "applied"]),
    );
  });

  it("has approved, read-only, suspended, invited and not-allowlisted users", () => {
    const byId = new Map(data.users.map((u) => [u.id, u]));
    expect(byId.get(DEMO_USERS.camille)).toMatchObject({ status: "approved", read_only: false });
    expect(byId.get(DEMO_USERS.julien)).toMatchObject({ status: "approved", read_only: true });
    expect(byId.get(DEMO_USERS.sophie)?.status).toBe("suspended");
    expect(byId.get(DEMO_USERS.lea)?.status).toBe("invited");
    expect(byId.get(DEMO_USERS.thomas)?.status).toBe("approved");
  });
});

describe("SIREN checksum", () => {
  it.each([
    ["732829320", true],
    ["732829321", false],
    ["356000000", true],
    ["123456789", false],
    ["12345678", false],
    ["73282932A", false],
  ])("checkSiren(%s).valid is %s", (siren, valid) => {
    expect(checkSiren(siren).valid).toBe(valid);
  });

  it("completes any 8 digits into a valid SIREN", () => {
    for (const prefix of ["00000000", "12345678", "99999999", "73282932"]) {
      expect(checkSiren(withCheckDigit(prefix)).valid).toBe(true);
    }
  });
});

describe("decimal amounts", () => {
  it("adds in cents without float drift", () => {
    expect(fromCents(toCents("0.10") + toCents("0.20"))).toBe("0.30");
    expect(fromCents(toCents("123456789012.5"))).toBe("123456789012.50");
    expect(fromCents(toCents("-1.05"))).toBe("-1.05");
    expect(toCents(null)).toBe(0n);
  });

  it("adds each family's data deterministically, without changing the core's draws", () => {
    const options = { seed: "aurore-demo", today: "2026-11-21" };
    const all = buildSandboxData(options);
    expect(buildSandboxData(options)).toEqual(all);
    expect(all.alerts.length).toBeGreaterThan(0);
    expect(all.calendarReceipts.length).toBe(
      data.calendarEvents.filter((e) => e.idempotency_receipt).length,
    );
    // The families only link records to theirs: the core's own values are as drawn.
    for (const name of ["operations", "deals", "operators", "spvs", "users", "notes"] as const)
      expect(all[name], name).toEqual(data[name]);
    const withoutLinks = ({ alert_id: _a, ...rest }: { alert_id: string | null }) => rest;
    expect(all.notifications.slice(0, data.notifications.length).map(withoutLinks)).toEqual(
      data.notifications.map(withoutLinks),
    );
    expect(all.calendarEvents.map((e) => [e.id, e.title, e.accepted])).toEqual(
      data.calendarEvents.map((e) => [e.id, e.title, e.accepted]),
    );
  });
});
