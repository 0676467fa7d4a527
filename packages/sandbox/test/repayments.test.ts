import { describe, expect, it } from "vitest";
import { fromCents, toCents } from "../src/money.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

const DAY_MS = 86_400_000;
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString().slice(0, 10);
const TODAY = inDays(0);
const DECIMAL = /^\d+\.\d{2}$/;

// Each test starts from the seeded data: no test sees another one's writes.
// Bearers outlive the days the lateness test moves the clock by.
const env = sandboxPerTest({ rateLimit: false, today: TODAY, tokenTtlSeconds: 30 * 86_400 });

const schedule = (operationId: string) =>
  env.client.get(`/operations/${operationId}/repayment-schedule`);
const put = (operationId: string, body: unknown, key = `put-${Math.random()}`) =>
  env.client.call("PUT", `/operations/${operationId}/repayment-schedule`, {
    body,
    idempotencyKey: key,
  });
const record = (operationId: string, body: unknown) =>
  env.client.write("POST", `/operations/${operationId}/repayments`, body);
const change = (operationId: string, id: string, body: unknown) =>
  env.client.write("PATCH", `/operations/${operationId}/repayments/${id}`, body);
/** A line of a seeded schedule, due after today, with nothing recorded on it. */
const openLine = () => {
  for (const s of env.data.repaymentSchedules) {
    const line = s.lines.find(
      (l) => l.due_date > TODAY && !env.data.repayments.some((r) => r.schedule_line_id === l.id),
    );
    if (line) return { operationId: s.operation_id, line };
  }
  throw new Error("no open line");
};

describe("seeded schedules", () => {
  it("say due, paid or late from today, with decimal strings that add up", async () => {
    const live = env.data.repaymentSchedules.find(
      (s) => s.lines.some((l) => l.due_date < TODAY) && s.lines.some((l) => l.due_date > TODAY),
    )!;
    const { body } = await schedule(live.operation_id);
    expect(body).toMatchObject({ currency: "EUR", version: 1, as_of: TODAY });
    let total = 0n;
    for (const line of body.lines) {
      for (const amount of ["principal", "interest", "total", "paid", "remaining"])
        expect(line[amount], amount).toMatch(DECIMAL);
      expect(toCents(line.total)).toBe(toCents(line.principal) + toCents(line.interest));
      expect(toCents(line.remaining)).toBe(toCents(line.total) - toCents(line.paid));
      const expected = line.remaining === "0.00" ? "paid" : line.due_date < TODAY ? "late" : "due";
      expect(line.status, line.due_date).toBe(expected);
      if (line.status === "late") expect(line.days_late).toBeGreaterThan(0);
      total += toCents(line.total);
    }
    expect(body.totals.total).toBe(fromCents(total));
    expect(body.next_due_date).toBe(
      body.lines.find((l: any) => l.status === "due")?.due_date ?? null,
    );
  });

  it("show as late the repayments the alerts report late, and nothing unpaid elsewhere", async () => {
    const lateAlerts = env.data.alerts.filter((a) => a.alert_type === "late_repayment");
    expect(lateAlerts.length).toBeGreaterThan(0);
    for (const alert of lateAlerts) {
      const { body } = await schedule(alert.operation_id!);
      const final = body.lines.at(-1);
      expect(final, alert.title).toMatchObject({ kind: "remboursement_final", status: "late" });
      expect(final.due_date).toBe(alert.due_date);
    }
    const lateInterest = new Set(
      env.data.notifications
        .filter((n) => n.title.startsWith("Retard de paiement des intérêts"))
        .map((n) => n.operation_id),
    );
    for (const s of env.data.repaymentSchedules) {
      const { body } = await schedule(s.operation_id);
      const late = body.lines.filter((l: any) => l.status === "late");
      const explained =
        lateInterest.has(s.operation_id) ||
        lateAlerts.some((a) => a.operation_id === s.operation_id);
      if (!explained) expect(late, s.operation_id).toEqual([]);
    }
  });

  it("answer an empty schedule for an operation that has none, 404 for no operation", async () => {
    const sourcing = env.data.operations.find((o) => o.status === "sourcing")!;
    const { body } = await schedule(sourcing.id);
    expect(body).toMatchObject({ version: 0, lines: [], next_due_date: null, updated_at: null });
    const missing = await schedule("0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40");
    expect(missing.body.reason_code).toBe("operation_not_found");
  });

  it("turn a line late once the sandbox's date passes it unpaid", async () => {
    const { operationId, line } = openLine();
    expect((await schedule(operationId)).body.lines.find((l: any) => l.id === line.id).status).toBe(
      "due",
    );
    const days = Math.round((Date.parse(line.due_date) - Date.parse(TODAY)) / DAY_MS) + 2;
    env.sandbox.control.skewClock(days * 86_400);
    const later = await schedule(operationId);
    expect(later.body.as_of > line.due_date).toBe(true);
    expect(later.body.lines.find((l: any) => l.id === line.id)).toMatchObject({
      status: "late",
      days_late: 2,
    });
  });
});

describe("replacing a schedule", () => {
  it("keeps the ids of lines whose date stays, bumps the version, refuses a stale one", async () => {
    const { operationId } = openLine();
    const before = (await schedule(operationId)).body;
    const lines = before.lines.map((l: any) => ({
      due_date: l.due_date,
      kind: l.kind,
      principal: l.principal,
      interest: l.interest,
    }));
    lines.push({ due_date: "2099-12-31", kind: "interets", principal: "0.00", interest: "10.5" });
    const reply = await put(operationId, { lines, expected_version: before.version });
    expect(reply.status).toBe(200);
    expect(reply.body.version).toBe(before.version + 1);
    expect(reply.body.updated_by).toBe("apikey:sandboxdemo");
    expect(reply.body.lines.slice(0, -1).map((l: any) => l.id)).toEqual(
      before.lines.map((l: any) => l.id),
    );
    expect(reply.body.lines.at(-1)).toMatchObject({ interest: "10.50", status: "due" });
    const stale = await put(operationId, { lines, expected_version: before.version });
    expect(stale.status).toBe(409);
    expect(stale.body.reason_code).toBe("version_conflict");
  });

  it("refuses to drop a line with repayments, a date given twice, an amount that is not one", async () => {
    const paid = env.data.repayments.find((r) => r.status === "confirmed")!;
    const stored = env.data.repaymentSchedules.find((s) => s.operation_id === paid.operation_id)!;
    const others = stored.lines
      .filter((l) => l.id !== paid.schedule_line_id)
      .map(({ id: _id, ...l }) => l);
    const dropped = await put(paid.operation_id, { lines: others });
    expect(dropped.status).toBe(409);
    expect(dropped.body.reason_code).toBe("schedule_line_has_repayments");
    const line = { due_date: "2099-01-01", kind: "interets", principal: "0.00", interest: "1.00" };
    const twice = await put(paid.operation_id, { lines: [line, line] });
    expect(twice.body.errors[0]).toMatchObject({ field: "lines[1].due_date", rule: "unique" });
    const float = await put(paid.operation_id, { lines: [{ ...line, interest: 1.5 }] });
    expect(float.body.errors[0].field).toBe("lines[0].interest");
  });
});

describe("repayments", () => {
  it("are recorded pending, count as paid once confirmed, and settle for good", async () => {
    const { operationId, line } = openLine();
    const total = fromCents(toCents(line.principal) + toCents(line.interest));
    const created = await record(operationId, {
      amount: total,
      value_date: TODAY,
      schedule_line_id: line.id,
      reference: "VIR-TEST-1",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: "pending", amount: total, settled_at: null });
    const pendingLine = (await schedule(operationId)).body.lines.find((l: any) => l.id === line.id);
    expect(pendingLine).toMatchObject({ status: "due", paid: "0.00" });

    const confirmed = await change(operationId, created.body.id, { status: "confirmed" });
    expect(confirmed.body).toMatchObject({ status: "confirmed" });
    expect(confirmed.body.settled_at).toEqual(expect.any(String));
    const paidLine = (await schedule(operationId)).body.lines.find((l: any) => l.id === line.id);
    expect(paidLine).toMatchObject({
      status: "paid",
      paid: total,
      remaining: "0.00",
      paid_on: TODAY,
    });

    for (const status of ["rejected", "confirmed"]) {
      const again = await change(operationId, created.body.id, { status });
      expect(again.status, status).toBe(409);
      expect(again.body).toMatchObject({
        reason_code: "invalid_transition",
        route_id: "repayment_update",
      });
    }
    const edited = await change(operationId, created.body.id, { amount: "1.00" });
    expect(edited.body.reason_code).toBe("repayment_settled");
    const comment = await change(operationId, created.body.id, { comment: "Rapproché." });
    expect(comment.body.comment).toBe("Rapproché.");
  });

  it("can be rejected while pending, and then leave the line owing", async () => {
    const pending = env.data.repayments.find((r) => r.status === "pending")!;
    const rejected = await change(pending.operation_id, pending.id, { status: "rejected" });
    expect(rejected.body.status).toBe("rejected");
    const line = (await schedule(pending.operation_id)).body.lines.find(
      (l: any) => l.id === pending.schedule_line_id,
    );
    expect(line.status).not.toBe("paid");
  });

  it("refuse more than the line owes, a future value date, a line of another schedule", async () => {
    const { operationId, line } = openLine();
    const total = toCents(line.principal) + toCents(line.interest);
    const over = await record(operationId, {
      amount: fromCents(total + 1n),
      value_date: TODAY,
      schedule_line_id: line.id,
    });
    expect(over.status).toBe(422);
    expect(over.body.reason_code).toBe("amount_exceeds_due");
    expect(over.body.errors[0]).toMatchObject({
      field: "amount",
      rule: `at most ${fromCents(total)}`,
    });
    const future = await record(operationId, { amount: "10.00", value_date: inDays(1) });
    expect(future.body.errors[0].field).toBe("value_date");
    const other = env.data.repaymentSchedules.find((s) => s.operation_id !== operationId)!;
    const elsewhere = await record(operationId, {
      amount: "10.00",
      value_date: TODAY,
      schedule_line_id: other.lines[0]!.id,
    });
    expect(elsewhere.body.reason_code).toBe("reference_not_found");
    expect((await record(operationId, { amount: "0.00", value_date: TODAY })).status).toBe(422);
  });

  it("list newest value date first, filtered by status", async () => {
    const { operation_id } = env.data.repayments.find((r) => r.status === "confirmed")!;
    const { body } = await env.client.get(`/operations/${operation_id}/repayments`, {
      query: { status: "confirmed" },
    });
    expect(body.total).toBeGreaterThan(0);
    expect(body.items.every((r: any) => r.status === "confirmed" && DECIMAL.test(r.amount))).toBe(
      true,
    );
    const dates = body.items.map((r: any) => r.value_date);
    expect(dates).toEqual([...dates].sort().reverse());
  });
});
