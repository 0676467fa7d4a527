import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { buildSandboxData } from "@portfolio-mcp/sandbox/data/index";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PartnerTestClient } from "../../packages/sandbox/test/helpers/partner-client.js";
import { connectInMemory } from "../helpers/mcp.js";

/**
 * The demo data agree with themselves and with the sandbox's own clock (issue 23): nothing the
 * data say has happened is later than the moment the sandbox started (events and due dates may
 * be ahead; detections, logins, creations, payments and reads may not), at any hour of the day;
 * an alert's amount due is the schedule line's and the timeline's; a SIREN resolution keeps the
 * company the local data know.
 */
let sandbox: Sandbox;
let startedAt: string;
beforeAll(async () => {
  startedAt = new Date().toISOString();
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

/** Instants that say when something is due to happen, not when it happened. */
const AHEAD = new Set([
  "expires_at",
  "invitation_expires_at",
  "next_run_at",
  "starts_at",
  "finishes_at",
  "estimated_completion_at",
]);

/** Every instant of the data (a `*_at` field holding a date and time) later than `now`. */
function doneAfter(data: object, now: string): string[] {
  const late: string[] = [];
  const walk = (value: unknown, path: string, key: string) => {
    if (Buffer.isBuffer(value)) return;
    if (Array.isArray(value)) for (const [i, v] of value.entries()) walk(v, `${path}[${i}]`, key);
    else if (value && typeof value === "object")
      for (const [k, v] of Object.entries(value)) walk(v, `${path}.${k}`, k);
    else if (
      typeof value === "string" &&
      key.endsWith("_at") &&
      !AHEAD.has(key) &&
      /^\d{4}-\d\d-\d\dT/.test(value) &&
      value > now
    )
      late.push(`${path} ${value}`);
  };
  for (const [name, value] of Object.entries(data)) walk(value, name, name);
  return late;
}

describe("the seed against the sandbox's clock", () => {
  it("detects no alert, logs no user in, creates, pays or reads nothing after now", () => {
    expect(doneAfter(sandbox.control.state.data, startedAt)).toEqual([]);
  });

  it("holds at any hour of the day, for other seeds too", () => {
    const today = "2026-11-26";
    for (const seed of ["aurore-demo", "another-portfolio"])
      for (const hour of ["00:05", "07:29", "08:59", "09:01", "13:30", "18:45", "23:58"]) {
        const now = Date.parse(`${today}T${hour}:00.000Z`);
        const data = buildSandboxData({ seed, today, now });
        expect(doneAfter(data, new Date(now).toISOString()), `${seed} at ${hour}`).toEqual([]);
      }
  });

  it("keeps open alerts' detections in the past, whatever their due date", () => {
    const open = sandbox.control.state.data.alerts.filter((a) => a.status === "open");
    expect(open.length).toBeGreaterThan(0);
    for (const alert of open) expect(alert.detected_at <= startedAt, alert.title).toBe(true);
  });
});

/** "9 506 327,75 EUR" as the API's decimal string, "9506327.75". */
const amountIn = (text: string | null | undefined): string | null => {
  const match = /(\d{1,3}(?:[\s\u202f]\d{3})*,\d{2}) EUR/.exec(text ?? "");
  return match ? match[1]!.replace(/[\s\u202f]/g, "").replace(",", ".") : null;
};
const frenchDay = (day: string) => day.split("-").reverse().join("/");

describe("amounts that agree across families, as the assistant reads them", () => {
  it("an alert's amount due is its schedule line's and its timeline event's", async () => {
    const s = await connectInMemory(sandbox, { contract: true });
    const call = async (name: string, args: Record<string, unknown>) => {
      const reply = (await s.client.callTool({ name, arguments: args })) as any;
      expect(reply.isError, JSON.stringify(reply.content)).toBeFalsy();
      return reply.structuredContent;
    };
    try {
      const alerts = [
        ...(await call("list_alerts", { alert_type: "late_repayment", limit: 100 })).items,
        ...(await call("list_alerts", { alert_type: "late_interest_payment", limit: 100 })).items,
      ];
      expect(alerts.length).toBeGreaterThan(3);
      for (const alert of alerts) {
        const label = `${alert.alert_type}: ${alert.title}`;
        expect(alert.due_date, label).toMatch(/^\d{4}-\d\d-\d\d$/);
        const schedule = (
          await call("call_api_read", {
            operation: "repayment_schedule_get",
            path: JSON.stringify({ operation_id: alert.operation_id }),
          })
        ).result;
        const line = schedule.lines.find((l: any) => l.due_date === alert.due_date);
        expect(line, label).toMatchObject({ status: "late" });
        const timeline = await call("get_operation_timeline", {
          operation_id: alert.operation_id,
          types: "repayment",
          limit: 100,
        });
        const event = timeline.items.find(
          (e: any) => e.title === `Échéance du ${frenchDay(alert.due_date)} impayée`,
        );
        expect(event, label).toBeDefined();
        expect(amountIn(alert.description), label).toBe(line.remaining);
        expect(amountIn(event.summary), label).toBe(line.remaining);
      }
    } finally {
      await s.close();
    }
  });
});

describe("a SIREN resolution", () => {
  it("refreshes, through the assistant's tools, the company it was, not one from another city", async () => {
    // The local record, as the seed wrote it (a resolution changes the cache, not the data).
    const local = sandbox.control.state.data.sirenRecords.find((r) => r.source === "local")!;
    const s = await connectInMemory(sandbox, {
      writes: {},
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    const read = async () =>
      (
        (await s.client.callTool({
          name: "lookup_siren",
          arguments: { siren: local.siren },
        })) as any
      ).structuredContent;
    try {
      const before = await read();
      expect(before).toMatchObject({ source: "local", denomination: local.denomination });
      const resolved = (await s.client.callTool({
        name: "resolve_siren",
        arguments: { siren: local.siren },
      })) as any;
      expect(resolved.structuredContent.status).toBe("succeeded");
      const after = await read();
      expect(after.source).toBe("cache");
      expect(after.fetched_at > before.fetched_at).toBe(true);
      const city = (r: { adresse: string }) => r.adresse.split(",").at(-1);
      expect(city(after)).toBe(city(local));
      expect(after).toMatchObject({
        denomination: local.denomination,
        forme_juridique: local.forme_juridique,
        date_creation: local.date_creation,
      });
    } finally {
      await s.close();
    }
  });

  it("keeps the identity of every company the local data know", async () => {
    const client = PartnerTestClient.for(sandbox);
    const local = sandbox.control.state.data.sirenRecords.filter((r) => r.source === "local");
    expect(local.length).toBeGreaterThan(20);
    for (const record of local) {
      const resolved = await client.write(
        "POST",
        `/enrichment/siren/${record.siren}/resolve`,
        undefined,
      );
      expect(resolved.status).toBe(200);
      const { denomination, forme_juridique, code_naf, adresse, date_creation } = record;
      expect(resolved.body, record.siren).toMatchObject({
        denomination,
        forme_juridique,
        code_naf,
        adresse,
        date_creation,
        billable: true,
      });
    }
  });
});
