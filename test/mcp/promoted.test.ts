import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory, type InMemoryOptions } from "../helpers/mcp.js";
import { connectModern } from "../helpers/modern.js";

/**
 * The promoted long-tail tools through a real client against the sandbox: alerts (a list and
 * one write tool for four moves), an operation's timeline with its narrative, and search. The
 * sandbox's request log is the witness: what each call sent, and for a write, one POST after
 * an accepted confirmation and none otherwise.
 */
let sandbox: Sandbox;
const sessions: Array<{ close(): Promise<void> }> = [];
const open = async (options: InMemoryOptions = {}) => {
  const session = await connectInMemory(sandbox, options);
  sessions.push(session);
  return session;
};
type Session = Awaited<ReturnType<typeof open>>;
type Reply = { structuredContent?: any; content: any[]; isError?: boolean };
const call = async (s: Session, name: string, args: Record<string, unknown> = {}) =>
  (await s.client.callTool({ name, arguments: args })) as Reply;
const ok = async (s: Session, name: string, args: Record<string, unknown> = {}) => {
  const reply = await call(s, name, args);
  expect(reply.isError, JSON.stringify(reply.content)).toBeFalsy();
  return reply.structuredContent;
};

const data = () => sandbox.control.state.data;
const alertNamed = (id: string) => data().alerts.find((a) => a.id === id)!;
const operationOf = (id: string | null) => data().operations.find((o) => o.id === id)!;
/** An alert in a state, on an operation, not yet used by another test. */
const used = new Set<string>();
function alertIn(status: string, severity?: string) {
  const alert = data().alerts.find(
    (a) =>
      a.status === status &&
      a.operation_id !== null &&
      (severity === undefined || a.severity === severity) &&
      !used.has(a.id),
  );
  if (!alert) throw new Error(`no ${status} alert left`);
  used.add(alert.id);
  return alert;
}
const today = () => new Date().toISOString().slice(0, 10);
const daysAhead = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const WRITES = ["alert_acknowledge", "alert_resolve", "alert_postpone", "alert_false_positive"];
const writesSince = (mark: number) =>
  sandbox.control.requests({ since: mark }).filter((e) => WRITES.includes(e.routeId ?? ""));

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
afterAll(() => sandbox.close());

describe("list_alerts", () => {
  it("lists alerts critical first then newest, compact, with the metric and paging", async () => {
    const s = await open();
    const page = await ok(s, "list_alerts", { limit: 200 });
    expect(page.total).toBe(data().alerts.length);
    const rank = { critical: 0, warning: 1, info: 2 } as Record<string, number>;
    const ranks = page.items.map((a: { severity: string }) => rank[a.severity]);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    const withMetric = page.items.find((a: any) => a.metric !== null);
    const seeded = alertNamed(withMetric.id);
    expect(withMetric).toEqual({
      id: seeded.id,
      title: seeded.title,
      alert_type: seeded.alert_type,
      severity: seeded.severity,
      status: seeded.status,
      operation_id: seeded.operation_id,
      // Named from the server's directory, not from a read per alert.
      operation_name: data().operations.find((o) => o.id === seeded.operation_id)?.name,
      metric: seeded.metric,
      description: seeded.description,
      due_date: seeded.due_date,
      postponed_until: seeded.postponed_until,
      detected_at: seeded.detected_at,
    });
    expect(withMetric.metric.value).toMatch(/^\d+\.\d{2}$/);
    expect(Object.keys(withMetric)).not.toContain("history");

    const first = await ok(s, "list_alerts", { limit: 5 });
    expect(first).toMatchObject({ offset: 0, next_offset: 5, total: page.total });
  });

  it("passes the API's filters as given, and refuses a bad one before sending", async () => {
    const s = await open();
    const alert = data().alerts.find((a) => a.status === "open" && a.severity === "critical")!;
    const mark = sandbox.control.mark();
    const page = await ok(s, "list_alerts", {
      status: "open",
      severity: "critical",
      operation_id: alert.operation_id,
    });
    expect(page.items.map((a: { id: string }) => a.id)).toContain(alert.id);
    for (const a of page.items) expect(a).toMatchObject({ status: "open", severity: "critical" });
    expect(sandbox.control.requests({ since: mark, routeId: "alerts_list" })[0]?.query).toEqual({
      status: "open",
      severity: "critical",
      operation_id: alert.operation_id,
    });

    const before = sandbox.control.mark();
    const reply = await call(s, "list_alerts", { status: "closed" });
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toMatch(/^list_alerts was not called: status must be one of/);
    expect(sandbox.control.requests({ since: before })).toHaveLength(0);
  });

  it("is the resource portfolio://alerts, with the same content", async () => {
    const s = await open();
    const read = await s.client.readResource({
      uri: "portfolio://alerts?severity=warning&limit=3",
    });
    const text = (read.contents[0] as { text: string }).text;
    expect(JSON.parse(text)).toEqual(await ok(s, "list_alerts", { severity: "warning", limit: 3 }));
  });
});

describe("act_on_alert", () => {
  /** A session whose client answers the confirmation form; what it was asked is kept. */
  async function answering(answer: ElicitResult) {
    const asked: string[] = [];
    const s = await open({
      writes: {},
      elicit: (params) => {
        asked.push((params as { message: string }).message);
        return answer;
      },
    });
    return { s, asked };
  }
  const yes: ElicitResult = { action: "accept", content: { confirm: true } };

  it("acknowledge: the preview names the alert, its operation and the author; yes sends one POST", async () => {
    const alert = alertIn("open", "critical");
    const operation = operationOf(alert.operation_id);
    const { s, asked } = await answering(yes);
    const mark = sandbox.control.mark();
    const reply = await call(s, "act_on_alert", {
      alert_id: alert.id,
      action: "acknowledge",
      comment: "Vu avec l'opérateur.",
    });
    expect(reply.isError, JSON.stringify(reply.content)).toBeFalsy();
    expect(asked).toEqual([
      [
        `Acknowledge an alert: critical alert «${alert.title}» (${alert.alert_type}, open${alert.metric ? `, «${alert.metric.name}» «${alert.metric.value}» «${alert.metric.unit}» against threshold «${alert.metric.threshold}» «${alert.metric.unit}»` : ""}) on operation «${operation.name}»`,
        "Recorded by the API as written by: the API key sandboxdemo (the integration's service account, not a person)",
        "comment: «Vu avec l'opérateur.»",
        "Nothing is written unless you accept.",
      ].join("\n"),
    ]);
    expect(reply.structuredContent).toMatchObject({
      status: "succeeded",
      result: { id: alert.id, status: "acknowledged", acknowledged_by: "apikey:sandboxdemo" },
    });
    const sent = writesSince(mark);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      method: "POST",
      routeId: "alert_acknowledge",
      path: `/v1/alerts/${alert.id}/acknowledge`,
      body: { comment: "Vu avec l'opérateur." },
      status: 200,
    });
    expect(sent[0]?.headers["idempotency-key"]).toMatch(/^pmcp-/);
    expect(alertNamed(alert.id).status).toBe("acknowledged");
  });

  it("acknowledge declined: nothing is sent", async () => {
    const alert = alertIn("open");
    const { s, asked } = await answering({ action: "decline" });
    const mark = sandbox.control.mark();
    const reply = await call(s, "act_on_alert", { alert_id: alert.id, action: "acknowledge" });
    expect(asked).toHaveLength(1);
    expect(reply.structuredContent).toMatchObject({
      status: "cancelled",
      message: "The user declined; nothing was written.",
    });
    expect(sandbox.control.requests({ since: mark, routeId: "alert_acknowledge" })).toHaveLength(0);
    expect(alertNamed(alert.id).status).toBe("open");
  });

  it("resolve: without a comment, one POST with no body", async () => {
    const alert = alertIn("acknowledged");
    const { s, asked } = await answering(yes);
    const mark = sandbox.control.mark();
    const reply = await call(s, "act_on_alert", { alert_id: alert.id, action: "resolve" });
    expect(asked[0]).toMatch(/^Resolve an alert: \w+ alert «/);
    expect(asked[0]).toContain(`(${alert.alert_type}, acknowledged`);
    expect(reply.structuredContent.result).toMatchObject({ status: "resolved" });
    const sent = writesSince(mark);
    expect(sent.map((e) => [e.routeId, e.body])).toEqual([["alert_resolve", null]]);
  });

  it("postpone: until is required, and must be after today and within 365 days; nothing sent otherwise", async () => {
    const alert = alertIn("open");
    const { s, asked } = await answering(yes);
    const mark = sandbox.control.mark();
    const refused = async (args: Record<string, unknown>, message: string) => {
      const reply = await call(s, "act_on_alert", { alert_id: alert.id, ...args });
      expect(reply.isError).toBe(true);
      expect(reply.content[0].text).toBe(
        `act_on_alert was not called: ${message}; fix the arguments and try again (nothing was sent).`,
      );
    };
    await refused(
      { action: "postpone" },
      "until is required to postpone (the date the alert reopens)",
    );
    await refused({ action: "postpone", until: today() }, `until must be after today (${today()})`);
    await refused(
      { action: "postpone", until: daysAhead(400) },
      `until must be at most 365 days ahead (by ${daysAhead(366)})`,
    );
    await refused(
      { action: "acknowledge", until: daysAhead(7) },
      "until is only for postpone, not acknowledge",
    );
    expect(asked).toHaveLength(0);
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);

    const until = daysAhead(14);
    const reply = await call(s, "act_on_alert", {
      alert_id: alert.id,
      action: "postpone",
      until,
      comment: "Après le comité.",
    });
    expect(asked[0]).toMatch(new RegExp(`^Postpone an alert until ${until}: `));
    expect(asked[0]).toContain(`until: «${until}»`);
    expect(reply.structuredContent.result).toMatchObject({
      status: "postponed",
      postponed_until: until,
    });
    const sent = writesSince(mark);
    expect(sent.map((e) => [e.routeId, e.body])).toEqual([
      ["alert_postpone", { until, comment: "Après le comité." }],
    ]);
  });

  it("false_positive: one POST, and the alert is closed", async () => {
    const alert = alertIn("open", "warning");
    const { s, asked } = await answering(yes);
    const mark = sandbox.control.mark();
    const reply = await call(s, "act_on_alert", {
      alert_id: alert.id,
      action: "false_positive",
      comment: "Donnée source erronée.",
    });
    expect(asked[0]).toMatch(/^Mark an alert as a false positive: warning alert «/);
    expect(reply.structuredContent.result).toMatchObject({
      status: "false_positive",
      closed_by: "apikey:sandboxdemo",
    });
    expect(writesSince(mark).map((e) => e.routeId)).toEqual(["alert_false_positive"]);
  });

  it("refuses a move the alert's state does not allow, clearly, drafting nothing", async () => {
    const closed = data().alerts.find((a) => a.status === "resolved")!;
    const { s, asked } = await answering(yes);
    const mark = sandbox.control.mark();
    const reply = await call(s, "act_on_alert", { alert_id: closed.id, action: "acknowledge" });
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toBe(
      `The alert «${closed.title}» is already resolved, which is final: it cannot be acknowledged. Nothing was drafted.`,
    );
    const again = alertIn("acknowledged");
    const twice = await call(s, "act_on_alert", { alert_id: again.id, action: "acknowledge" });
    expect(twice.content[0].text).toBe(
      `The alert «${again.title}» is already acknowledged: it cannot be acknowledged. Nothing was drafted.`,
    );
    expect(asked).toHaveLength(0);
    expect(writesSince(mark)).toHaveLength(0);
  });

  it("a move the API refuses after confirmation (the alert moved meanwhile): one POST, a clear error", async () => {
    const alert = alertIn("open");
    const s = await open({ writes: { mode: "two-step" } });
    const draft = await ok(s, "act_on_alert", { alert_id: alert.id, action: "acknowledge" });
    expect(draft.status).toBe("awaiting_confirmation");
    // The confirmation id names the write, so "allow confirm_write?" shows which one: its
    // operation and target, in words no upstream text can write.
    expect(draft.confirmation_id).toMatch(
      new RegExp(
        `^alert_acknowledge alert_id=${alert.id} · (no body|body sha256:[0-9a-f]{12}) \\[cf_[\\w-]+\\]$`,
      ),
    );
    alertNamed(alert.id).status = "acknowledged"; // someone else acknowledged it
    const mark = sandbox.control.mark();
    const reply = await call(s, "confirm_write", { confirmation_id: draft.confirmation_id });
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toMatch(
      new RegExp(
        `^Conflict on the write: Alert ${alert.id} is acknowledged: acknowledge is allowed only from open, postponed \\(request pmcp-[\\w-]+\\)\\. Nothing was written\\.$`,
      ),
    );
    const sent = writesSince(mark);
    expect(sent.map((e) => [e.routeId, e.status])).toEqual([["alert_acknowledge", 409]]);
  });

  it("drafts for a 2026 client in an input-required round trip, the action's own operation", async () => {
    const alert = alertIn("open");
    const asked: string[] = [];
    const session = await connectModern(sandbox, {
      elicitation: true,
      answer: (message) => {
        asked.push(message);
        return { action: "accept", content: { confirm: true } };
      },
    });
    sessions.push(session);
    const mark = sandbox.control.mark();
    const reply = (await session.client.callTool({
      name: "act_on_alert",
      arguments: { alert_id: alert.id, action: "resolve", comment: "Levée." },
    })) as Reply;
    expect(reply.structuredContent).toMatchObject({ status: "succeeded" });
    expect(asked[0]).toMatch(/^Resolve an alert: \w+ alert «/);
    expect(writesSince(mark).map((e) => [e.routeId, e.body])).toEqual([
      ["alert_resolve", { comment: "Levée." }],
    ]);
  });

  it("names an unknown alert in one sentence", async () => {
    const s = await open({ writes: {} });
    const reply = await call(s, "act_on_alert", {
      alert_id: "00000000-0000-4000-8000-000000000000",
      action: "resolve",
    });
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toMatch(/^Not found for act_on_alert: /);
  });
});

describe("get_operation_timeline", () => {
  const busy = () => {
    const counts = new Map<string, number>();
    for (const a of data().alerts)
      if (a.operation_id) counts.set(a.operation_id, (counts.get(a.operation_id) ?? 0) + 1);
    return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  };

  it("lists events newest first, compact, filtered by types and dates as the API takes them", async () => {
    const s = await open();
    const id = busy();
    const page = await ok(s, "get_operation_timeline", { operation_id: id });
    expect(page.total).toBeGreaterThan(5);
    const times = page.items.map((e: { occurred_at: string }) => e.occurred_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(Object.keys(page.items[0]).sort()).toEqual(
      [
        "id",
        "occurred_at",
        "type",
        "title",
        "summary",
        "actor",
        "severity",
        "source_type",
        "source_id",
      ].sort(),
    );
    expect(page.narrative).toBeUndefined();

    const mark = sandbox.control.mark();
    const since = times.at(-1).slice(0, 10);
    const alerts = await ok(s, "get_operation_timeline", {
      operation_id: id,
      types: "alert,note",
      since,
      limit: 3,
    });
    for (const e of alerts.items) expect(["alert", "note"]).toContain(e.type);
    expect(alerts.items.length).toBeLessThanOrEqual(3);
    const alertEvent = alerts.items.find((e: { type: string }) => e.type === "alert");
    if (alertEvent) expect(alertEvent.source_type).toBe("alert");
    const sent = sandbox.control
      .requests({ since: mark })
      .filter((e) => e.routeId !== "auth_token");
    expect(sent.map((e) => [e.routeId, e.query])).toEqual([
      ["operation_timeline", { types: "alert,note", since, limit: "3" }],
    ]);
  });

  it("adds the narrative when asked, calling both operations once", async () => {
    const s = await open();
    const id = busy();
    const mark = sandbox.control.mark();
    const reply = await call(s, "get_operation_timeline", {
      operation_id: id,
      narrative: true,
      limit: 5,
    });
    const out = reply.structuredContent;
    expect(out.items).toHaveLength(5);
    expect(out.narrative).toMatchObject({
      title: expect.stringContaining(operationOf(id).name),
      as_of: today(),
      text: expect.stringContaining("Situation"),
    });
    expect(reply.content.at(-1).text).toContain(`Narrative, ${out.narrative.period_start} to `);
    expect(
      sandbox.control
        .requests({ since: mark })
        .map((e) => e.routeId)
        .filter((id) => id !== "auth_token")
        .sort(),
    ).toEqual(["operation_narrative", "operation_timeline"]);
  });

  it("refuses an unknown type by name, sending nothing; reads as a resource too", async () => {
    const s = await open();
    const id = busy();
    const mark = sandbox.control.mark();
    const reply = await call(s, "get_operation_timeline", {
      operation_id: id,
      types: "alert,mail",
    });
    expect(reply.content[0].text).toBe(
      'get_operation_timeline was not called: types must be a comma-separated list of status_change, note, alert, calendar_event, document, task, repayment; unknown: "mail"; fix the arguments and try again (nothing was sent).',
    );
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);

    const read = await s.client.readResource({
      uri: `portfolio://operations/${id}/timeline?types=status_change&limit=2`,
    });
    const text = (read.contents[0] as { text: string }).text;
    expect(JSON.parse(text)).toEqual(
      await ok(s, "get_operation_timeline", { operation_id: id, types: "status_change", limit: 2 }),
    );
  });
});

describe("search_portfolio", () => {
  it("finds records of every kind, each typed, best first, filtered by types", async () => {
    const s = await open();
    const operation = data().operations[0]!;
    const found = await ok(s, "search_portfolio", { q: operation.name });
    expect(found.items[0]).toMatchObject({
      id: operation.id,
      type: "operation",
      title: operation.name,
      matched_on: "name",
      score: 1,
    });
    const scores = found.items.map((h: { score: number }) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));

    const documents = await ok(s, "search_portfolio", { q: "rapport", types: "document,spv" });
    expect(documents.total).toBeGreaterThan(0);
    for (const hit of documents.items) expect(["document", "spv"]).toContain(hit.type);
    const everything = await ok(s, "search_portfolio", { q: "aurore", limit: 50 });
    expect(new Set(everything.items.map((h: { type: string }) => h.type)).size).toBeGreaterThan(1);
  });

  it("refuses a query the API would refuse, before sending", async () => {
    const s = await open();
    const mark = sandbox.control.mark();
    const short = await call(s, "search_portfolio", { q: "a" });
    expect(short.content[0].text).toMatch(/^search_portfolio was not called: q must /);
    const kinds = await call(s, "search_portfolio", { q: "aurore", types: "fund" });
    expect(kinds.content[0].text).toContain('unknown: "fund"');
    const big = await call(s, "search_portfolio", { q: "aurore", limit: 51 });
    expect(big.content[0].text).toContain("limit must be at most 50");
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
  });
});
