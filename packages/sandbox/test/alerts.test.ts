import { describe, expect, it } from "vitest";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

// The sandbox's clock is the machine's: dates are relative to today, whatever day tests run.
const DAY_MS = 86_400_000;
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString().slice(0, 10);
const TODAY = inDays(0);

// Each test starts from the seeded data: state machines are about state.
// Bearers outlive the days the postponement test moves the clock by.
const env = sandboxPerTest({ rateLimit: false, today: TODAY, tokenTtlSeconds: 7 * 86_400 });

const alerts = () => env.data.alerts;
const alertIn = (status: string) => {
  const alert = alerts().find((a) => a.status === status);
  if (!alert) throw new Error(`no seeded alert is ${status}`);
  return alert;
};
const move = (id: string, path: string, body?: unknown) =>
  env.client.write("POST", `/alerts/${id}/${path}`, body);

describe("seeded alerts", () => {
  it("are about named operations, with every lifecycle state and linked notifications", async () => {
    const { body } = await env.client.get("/alerts", { query: { limit: 200 } });
    expect(body.total).toBeGreaterThanOrEqual(25);
    expect(new Set(body.items.map((a: any) => a.status))).toEqual(
      new Set(["open", "acknowledged", "postponed", "resolved", "false_positive"]),
    );
    const types = new Set(body.items.map((a: any) => a.alert_type));
    for (const type of ["ltv_breach", "dscr_breach", "late_repayment", "covenant_deadline"])
      expect(types.has(type), type).toBe(true);
    expect(body.items.some((a: any) => a.title.includes("Les Terrasses"))).toBe(true);
    // Critical first, then the newest.
    const ranks = body.items.map((a: any) => ["critical", "warning", "info"].indexOf(a.severity));
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    const ltv = body.items.find((a: any) => a.alert_type === "ltv_breach" && a.metric);
    expect(ltv.metric).toMatchObject({ name: "ltv", unit: "%" });
    expect(Number(ltv.metric.value)).toBeGreaterThan(Number(ltv.metric.threshold));
    const notified = env.data.notifications.filter((n) => n.alert_id);
    for (const n of notified) expect(alerts().some((a) => a.id === n.alert_id)).toBe(true);
  });

  it("are where the calendar's proposals came from", () => {
    const ids = new Set(alerts().map((a) => a.id));
    const proposals = env.data.calendarEvents.filter((e) => e.source === "alert");
    expect(proposals.length).toBeGreaterThan(0);
    for (const e of proposals) expect(ids.has(e.source_alert_id!)).toBe(true);
  });

  it("filter by status, severity, type and operation", async () => {
    const critical = await env.client.get("/alerts", {
      query: { severity: "critical", status: "open" },
    });
    expect(critical.body.total).toBeGreaterThan(0);
    for (const a of critical.body.items)
      expect(a).toMatchObject({ severity: "critical", status: "open" });
    const one = alerts().find((a) => a.operation_id)!;
    const byOperation = await env.client.get("/alerts", {
      query: { operation_id: one.operation_id! },
    });
    expect(byOperation.body.items.every((a: any) => a.operation_id === one.operation_id)).toBe(
      true,
    );
    const bad = await env.client.get("/alerts", { query: { status: "closed" } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe("status");
  });
});

describe("the alert lifecycle", () => {
  it("acknowledges an open alert, records who and when, and refuses it twice", async () => {
    const open = alertIn("open");
    const reply = await move(open.id, "acknowledge", { comment: "Vu avec l'opérateur." });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: "acknowledged",
      acknowledged_by: "apikey:sandboxdemo",
    });
    expect(reply.body.history.at(-1)).toMatchObject({
      from: "open",
      to: "acknowledged",
      comment: "Vu avec l'opérateur.",
    });
    const again = await move(open.id, "acknowledge");
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      reason_code: "invalid_transition",
      route_id: "alert_acknowledge",
    });
  });

  it("allows every move the table allows, and none out of a closed state", async () => {
    const table: Array<[string, string, string]> = [
      ["open", "postpone", "postponed"],
      ["open", "resolve", "resolved"],
      ["open", "false-positive", "false_positive"],
      ["acknowledged", "postpone", "postponed"],
      ["acknowledged", "resolve", "resolved"],
      ["acknowledged", "false-positive", "false_positive"],
      ["postponed", "acknowledge", "acknowledged"],
      ["postponed", "postpone", "postponed"],
      ["postponed", "resolve", "resolved"],
      ["postponed", "false-positive", "false_positive"],
    ];
    for (const [from, path, to] of table) {
      const alert = alertIn(from);
      const body = path === "postpone" ? { until: inDays(20) } : undefined;
      const reply = await move(alert.id, path, body);
      expect(reply.status, `${from} ${path}`).toBe(200);
      expect(reply.body.status).toBe(to);
      // Put it back so the next row finds an alert in the state it needs.
      Object.assign(alert, { status: from });
    }
    for (const closed of ["resolved", "false_positive"]) {
      const alert = alertIn(closed);
      for (const path of ["acknowledge", "postpone", "resolve", "false-positive"]) {
        const reply = await move(
          alert.id,
          path,
          path === "postpone" ? { until: inDays(20) } : undefined,
        );
        expect(reply.status, `${closed} ${path}`).toBe(409);
        expect(reply.body.reason_code).toBe("invalid_transition");
        expect(reply.body.detail).toContain(closed);
      }
    }
  });

  it("postpones until a date after today, then reopens the alert on that date", async () => {
    const open = alerts().find((a) => a.status === "open" && a.severity === "critical")!;
    for (const until of [TODAY, inDays(-20), inDays(366)]) {
      const refused = await move(open.id, "postpone", { until });
      expect(refused.status, until).toBe(422);
      expect(refused.body.errors[0].field).toBe("until");
    }
    const missing = await move(open.id, "postpone", {});
    expect(missing.status).toBe(422);

    const reply = await move(open.id, "postpone", { until: inDays(3) });
    expect(reply.body).toMatchObject({ status: "postponed", postponed_until: inDays(3) });

    env.sandbox.control.skewClock(3 * 86_400);
    const woken = await env.client.get(`/alerts/${open.id}`);
    expect(woken.body).toMatchObject({ status: "open", postponed_until: null });
    expect(woken.body.history.at(-1)).toMatchObject({
      from: "postponed",
      to: "open",
      by: "system",
    });
    // It is announced again: a new unread notification, which keeps has_critical up.
    const fresh = await env.client.get("/notifications", {
      query: { unread_only: "true", limit: 200 },
    });
    expect(fresh.body.items.filter((n: any) => n.alert_id === open.id && !n.read)).toHaveLength(1);
    expect((await env.client.get("/notifications/unread-count")).body.has_critical).toBe(true);
  });

  it("answers 404 for an unknown alert and 422 for a malformed id", async () => {
    const unknown = await move("0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40", "resolve");
    expect(unknown.status).toBe(404);
    expect(unknown.body.reason_code).toBe("alert_not_found");
    expect((await env.client.get("/alerts/not-a-uuid")).status).toBe(422);
  });
});

describe("notifications", () => {
  it("drive has_critical until every critical alert has been acted on", async () => {
    expect((await env.client.get("/notifications/unread-count")).body.has_critical).toBe(true);
    const criticalOpen = alerts().filter((a) => a.severity === "critical" && a.status === "open");
    const unreadCritical = env.data.notifications.filter(
      (n) => !n.read && n.severity === "critical",
    );
    // Every unread critical notification announces an open critical alert.
    for (const n of unreadCritical)
      expect(
        criticalOpen.some((a) => a.id === n.alert_id),
        n.title,
      ).toBe(true);
    for (const [i, alert] of criticalOpen.entries())
      expect((await move(alert.id, i % 2 ? "resolve" : "acknowledge")).status).toBe(200);
    expect((await env.client.get("/notifications/unread-count")).body.has_critical).toBe(false);
  });

  it("list newest first, filter unread ones, and mark one read, twice harmlessly", async () => {
    const all = await env.client.get("/notifications", { query: { limit: 200 } });
    const dates = all.body.items.map((n: any) => n.created_at);
    expect(dates).toEqual([...dates].sort().reverse());
    const unread = await env.client.get("/notifications", {
      query: { unread_only: "true", limit: 200 },
    });
    expect(unread.body.items.every((n: any) => !n.read)).toBe(true);
    const one = unread.body.items[0];
    const read = await env.client.write("POST", `/notifications/${one.id}/read`, undefined);
    expect(read.body).toMatchObject({ id: one.id, read: true });
    expect(read.body.read_at).toEqual(expect.any(String));
    const again = await env.client.write("POST", `/notifications/${one.id}/read`, undefined);
    expect(again.body.read_at).toBe(read.body.read_at);
    const count = (await env.client.get("/notifications/unread-count")).body.count;
    expect(count).toBe(unread.body.total - 1);
    expect((await env.client.get("/notifications", { query: { unread_only: "yes" } })).status).toBe(
      422,
    );
  });

  it("mark all read, or only those up to a time so that later ones stay unread", async () => {
    const unread = env.data.notifications
      .filter((n) => !n.read)
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
    const cutoff = unread[Math.floor(unread.length / 2)]!.created_at;
    const later = unread.filter((n) => n.created_at > cutoff).length;
    const partial = await env.client.write("POST", "/notifications/read-all", { before: cutoff });
    expect(partial.body).toMatchObject({ marked: unread.length - later, count: later });
    const rest = await env.client.write("POST", "/notifications/read-all", undefined);
    expect(rest.body).toEqual({ marked: later, count: 0, has_critical: false });
  });
});
