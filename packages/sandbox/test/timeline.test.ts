import { describe, expect, it } from "vitest";
import { DEMO_KEYS } from "../src/index.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false });

const timeline = (id: string, query: Record<string, string | number> = {}) =>
  env.client.get(`/operations/${id}/timeline`, { query: { limit: 200, ...query } });
const narrative = (id: string, query: Record<string, string | number> = {}) =>
  env.client.get(`/operations/${id}/timeline/narrative`, { query });
/** A live operation with notes, alerts, tasks and documents: its timeline has every kind. */
const busy = () =>
  env.data.operations.find(
    (o) =>
      env.data.notes.some((n) => n.operation_id === o.id) &&
      env.data.alerts.some((a) => a.operation_id === o.id) &&
      env.data.tasks.some((t) => t.operation_id === o.id) &&
      env.data.calendarEvents.some(
        (e) => e.operation_id === o.id && e.event_date < new Date().toISOString(),
      ) &&
      env.data.repayments.some((r) => r.operation_id === o.id),
  )!;

describe("the timeline", () => {
  it("tells an operation's history from its records, newest first, each fact once", async () => {
    const operation = busy();
    const { body } = await timeline(operation.id);
    const types = new Set(body.items.map((e: any) => e.type));
    for (const type of [
      "status_change",
      "note",
      "alert",
      "calendar_event",
      "document",
      "task",
      "repayment",
    ])
      expect(types.has(type), type).toBe(true);
    const times = body.items.map((e: any) => e.occurred_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(times[0] <= new Date().toISOString()).toBe(true);
    expect(new Set(body.items.map((e: any) => e.id)).size).toBe(body.items.length);
    const notes = env.data.notes.filter((n) => n.operation_id === operation.id);
    for (const note of notes)
      expect(body.items.some((e: any) => e.source.type === "note" && e.source.id === note.id)).toBe(
        true,
      );
    const created = body.items.at(-1);
    expect(created).toMatchObject({ type: "status_change", actor: "system" });
    expect(created.title).toContain("Sourcing");
  });

  it("keeps ids stable and pages without gaps, so clients can deduplicate", async () => {
    const operation = busy();
    const whole = (await timeline(operation.id)).body;
    const pages = [];
    for (let offset = 0; offset < whole.total; offset += 7)
      pages.push(...(await timeline(operation.id, { limit: 7, offset })).body.items);
    expect(pages).toEqual(whole.items);
  });

  it("filters by type and by business dates", async () => {
    const operation = busy();
    const notes = await timeline(operation.id, { types: "note,task" });
    expect(notes.body.items.every((e: any) => e.type === "note" || e.type === "task")).toBe(true);
    const whole = (await timeline(operation.id)).body.items;
    const pivot = whole[Math.floor(whole.length / 2)].occurred_at.slice(0, 10);
    const recent = await timeline(operation.id, { since: pivot });
    expect(recent.body.items.every((e: any) => e.occurred_at.slice(0, 10) >= pivot)).toBe(true);
    const older = await timeline(operation.id, { until: pivot });
    expect(older.body.items.every((e: any) => e.occurred_at.slice(0, 10) <= pivot)).toBe(true);
    const wrong = await timeline(operation.id, { types: "note,rumeur" });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].field).toBe("types");
  });

  it("shows what was written a moment ago, and not what the key may not open", async () => {
    const litigation = env.data.datarooms.find((d) => d.name.includes("Précontentieux"))!;
    const operationId = litigation.operation_id!;
    const secret = env.data.documents.find((d) => d.dataroom?.id === litigation.id)!;
    const has = async (id: string) =>
      (await timeline(operationId)).body.items.some((e: any) => e.source.id === id);
    expect(await has(secret.id)).toBe(false);
    litigation.members.push("apikey:sandboxdemo");
    try {
      expect(await has(secret.id)).toBe(true);
    } finally {
      litigation.members.pop();
    }
    const note = await env.client.write("POST", `/operations/${operationId}/notes`, {
      content: "Point avec le conseil de l'opérateur.",
      note_type: "call",
    });
    const first = (await timeline(operationId)).body.items[0];
    expect(first).toMatchObject({ type: "note", source: { type: "note", id: note.body.id } });
  });

  it("answers 404 for an unknown operation", async () => {
    const reply = await timeline("0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40");
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({
      reason_code: "operation_not_found",
      route_id: "operation_timeline",
    });
  });
});

describe("the narrative", () => {
  it("tells the situation, the period's facts, the points of attention and what comes next", async () => {
    const operation = busy();
    const { body } = await narrative(operation.id, { days: 365 });
    expect(body).toMatchObject({ operation_id: operation.id, language: "fr" });
    expect(body.sections.map((s: any) => s.key)).toEqual([
      "situation",
      "faits_marquants",
      "points_attention",
      "a_venir",
    ]);
    expect(body.sections[0].text).toContain(operation.name);
    const events = (await timeline(operation.id, { since: body.period_start })).body;
    expect(body.event_count).toBe(events.total);
    for (const alert of env.data.alerts.filter(
      (a) => a.operation_id === operation.id && a.status === "open",
    ))
      expect(body.sections[2].text).toContain(alert.title);
    expect(body.text).toBe(body.sections.map((s: any) => `${s.heading}\n${s.text}`).join("\n\n"));
  });

  it("is deterministic, and says when nothing happened or is planned", async () => {
    const operation = busy();
    expect((await narrative(operation.id)).body).toEqual((await narrative(operation.id)).body);
    const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
    let quiet: (typeof env.data)["operations"][number] | undefined;
    for (const o of env.data.operations.filter((x) => x.phase === "terminee")) {
      if ((await timeline(o.id, { since: weekAgo })).body.total === 0) {
        quiet = o;
        break;
      }
    }
    const { body } = await narrative(quiet!.id, { days: 7 });
    expect(body.sections[1].text).toMatch(/^Aucun événement depuis le /);
    expect(body.sections[3].text).toMatch(/^Rien de planifié/);
    expect((await narrative(quiet!.id, { days: 3 })).status).toBe(422);
  });

  it("reports unpaid lines among the points of attention", async () => {
    const late = env.data.alerts.find((a) => a.alert_type === "late_repayment")!;
    const { body } = await narrative(late.operation_id!);
    expect(body.sections[2].text).toMatch(/échéances? impayées?/);
  });

  it("shows a status move made through the API, with its author, newest first", async () => {
    const operation = env.data.operations.find((o) => o.status === "sourcing")!;
    const moved = await env.client.write("PATCH", `/operations/${operation.id}`, {
      version: operation.version,
      status: "instruction",
    });
    expect(moved.status).toBe(200);
    const { body } = await timeline(operation.id);
    expect(body.items[0]).toMatchObject({
      type: "status_change",
      actor: `apikey:${DEMO_KEYS.full.keyId}`,
    });
    expect(body.items[0].title).toContain("→");
  });
});
