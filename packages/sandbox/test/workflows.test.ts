import { describe, expect, it } from "vitest";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

const NO_SUCH_OPERATION = "0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40";

// Each test starts from the seeded data. Bearers outlive the days the scheduler test moves by.
const env = sandboxPerTest({ rateLimit: false, tokenTtlSeconds: 7 * 86_400 });

const definitions = () => env.data.workflows;
const definitionIn = (state: string) => {
  const found = definitions().find((w) => w.state === state && w.can_toggle);
  if (!found) throw new Error(`no seeded definition is ${state}`);
  return found;
};
const path = (key: string, tail = "") => `/workflows/definitions/${key}${tail}`;
const toggle = (key: string, enabled: boolean) =>
  env.client.write("POST", path(key, "/toggle"), { enabled });
const run = (key: string) => env.client.write("POST", path(key, "/executions"), undefined);
const remove = (key: string) =>
  env.client.call("DELETE", path(key), { idempotencyKey: `del-${key}-${Date.now()}` });
/** Moves the sandbox's clock to `seconds` ahead of the machine's; the bearer was taken before. */
async function at(seconds: number) {
  await env.client.token();
  env.sandbox.control.skewClock(seconds);
}
const create = (body: Record<string, unknown>) =>
  env.client.write("POST", "/workflows/definitions", {
    preset_key: "covenant_monitoring",
    name: "Covenants – financements mezzanine",
    ...body,
  });

describe("the presets and the seeded definitions", () => {
  it("lists the presets catalogue and gets one by key", async () => {
    const list = await env.client.get("/workflows/presets");
    expect(list.body.total).toBe(6);
    const preset = await env.client.get("/workflows/presets/reporting_reminder");
    expect(preset.body).toMatchObject({
      key: "reporting_reminder",
      schedule_mode: "daily",
      default_schedule: "0 8 * * *",
    });
    const missing = await env.client.get("/workflows/presets/inconnu");
    expect(missing.status).toBe(404);
    expect(missing.body.reason_code).toBe("workflow_preset_not_found");
  });

  it("has definitions in every state, with executions whose results agree with them", async () => {
    const { body } = await env.client.get("/workflows/definitions", { query: { limit: 200 } });
    expect(new Set(body.items.map((w: any) => w.state))).toEqual(
      new Set(["draft", "active", "inactive", "error"]),
    );
    const failing = body.items.find((w: any) => w.state === "error");
    expect(failing.last_error).toContain("Opération introuvable");
    const executions = await env.client.get("/workflows/executions", {
      query: { workflow_key: failing.key },
    });
    expect(executions.body.items[0]).toMatchObject({ status: "failed", error: failing.last_error });
    const succeeded = await env.client.get("/workflows/executions", {
      query: { status: "succeeded", limit: 200 },
    });
    expect(succeeded.body.total).toBeGreaterThan(3);
    for (const e of succeeded.body.items)
      expect(e.result).toMatchObject({ checked: expect.any(Number) });
    const byState = await env.client.get("/workflows/definitions", { query: { state: "draft" } });
    expect(byState.body.items.every((w: any) => w.state === "draft")).toBe(true);
  });

  it("lists a workflow created from a recommendation among the definitions, with its history", async () => {
    const recs = (await env.client.call("POST", "/workflows/recommendations/preview")).body.items;
    const validated = recs.find((r: any) => r.status === "validated");
    const created = await env.client.write(
      "POST",
      `/workflows/recommendations/${validated.id}/workflow`,
      { name: "Depuis la recommandation" },
    );
    expect(created.status).toBe(201);
    const listed = await env.client.get(path(created.body.key));
    expect(listed.body).toMatchObject({ key: created.body.key, state: "active", origin: "system" });
    const all = await env.client.get("/workflows/definitions", { query: { limit: 200 } });
    expect(all.body.items.some((w: any) => w.key === created.body.key)).toBe(true);
    const history = await env.client.get("/workflows/history", {
      query: { workflow_key: created.body.key, event: "created" },
    });
    expect(history.body.items[0]).toMatchObject({
      actor: "apikey:sandboxdemo",
      details: { recommendation_id: validated.id },
    });
    // Its first run is due at its creation: the scheduler starts it on the next request.
    const runs = await env.client.get("/workflows/executions", {
      query: { workflow_key: created.body.key },
    });
    expect(runs.body.items).toMatchObject([
      { trigger: "schedule", queued_at: created.body.next_run_at },
    ]);
  });
});

describe("creating and changing definitions", () => {
  it("creates a draft from a preset, with the preset's defaults under what was sent", async () => {
    const reply = await create({
      key: "covenants_mezzanine",
      schedule: "30 7 * * 5",
      configuration: { ltv_max_pct: "65.00" },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      key: "covenants_mezzanine",
      state: "draft",
      enabled: false,
      origin: "custom",
      is_custom: true,
      schedule_mode: "weekly",
      configuration: { ltv_max_pct: "65.00", dscr_min: "0.85" },
      next_run_at: null,
    });
    const again = await create({ key: "covenants_mezzanine" });
    expect(again.status).toBe(409);
    expect(again.body.reason_code).toBe("workflow_key_taken");
    const unknown = await create({ preset_key: "inconnu" });
    expect(unknown.body).toMatchObject({ status: 422, reason_code: "reference_not_found" });
    for (const schedule of ["0 8 * * 7", "0 8 31 * *", "toutes les heures", "0 8 1 * 1"]) {
      const bad = await create({ schedule });
      expect(bad.status, schedule).toBe(422);
      expect(bad.body.errors[0].field).toBe("schedule");
    }
  });

  it("changes what is sent, and repairs a definition in error", async () => {
    const failing = definitionIn("error");
    const reply = await env.client.write("PATCH", path(failing.key), {
      configuration: { min_reservations_per_month: 3 },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      state: "inactive",
      last_error: null,
      name: failing.name,
      configuration: { min_reservations_per_month: 3 },
    });
    const empty = await env.client.write("PATCH", path(failing.key), {});
    expect(empty.status).toBe(422);
  });

  it("keeps a mandatory definition as it is", async () => {
    const mandatory = definitions().find((w) => !w.is_editable)!;
    const cases: Array<[Promise<any>, string]> = [
      [env.client.write("PATCH", path(mandatory.key), { name: "x" }), "workflow_not_editable"],
      [toggle(mandatory.key, false), "workflow_not_toggleable"],
      [remove(mandatory.key), "workflow_not_deletable"],
    ];
    for (const [reply, code] of cases) {
      const { status, body } = await reply;
      expect(status, code).toBe(409);
      expect(body.reason_code).toBe(code);
    }
  });
});

describe("the definition lifecycle", () => {
  it("allows the moves of the table, and refuses the others with 409 invalid_transition", async () => {
    const draft = (await create({})).body.key;
    const enabled = await toggle(draft, true);
    expect(enabled.body).toMatchObject({ state: "active", enabled: true });
    expect(Date.parse(enabled.body.next_run_at)).toBeGreaterThan(Date.now());
    const twice = await toggle(draft, true);
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({
      reason_code: "invalid_transition",
      route_id: "workflow_definition_toggle",
    });
    const activeDelete = await remove(draft);
    expect(activeDelete.body.reason_code).toBe("invalid_transition");
    const disabled = await toggle(draft, false);
    expect(disabled.body).toMatchObject({ state: "inactive", enabled: false, next_run_at: null });
    expect((await toggle(draft, true)).body.state).toBe("active");
    // From error: disable, or delete.
    const failing = definitionIn("error").key;
    expect((await run(failing)).body.reason_code).toBe("invalid_transition");
    expect((await toggle(failing, true)).body.reason_code).toBe("invalid_transition");
    expect((await toggle(failing, false)).body.state).toBe("inactive");
    expect((await remove(failing)).status).toBe(204);
    expect((await env.client.get(path(failing))).status).toBe(404);
    // A draft is deleted, not run.
    const other = (await create({ name: "Brouillon" })).body.key;
    expect((await run(other)).body.reason_code).toBe("invalid_transition");
    expect((await remove(other)).status).toBe(204);
    // The history keeps what was deleted.
    const history = await env.client.get("/workflows/history", {
      query: { workflow_key: failing },
    });
    expect(history.body.items[0]).toMatchObject({ event: "deleted" });
  });

  it("runs an active or inactive definition: queued, running, then succeeded, one at a time", async () => {
    const inactive = definitionIn("inactive").key;
    const queued = await run(inactive);
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({
      workflow_key: inactive,
      status: "queued",
      trigger: "manual",
      requested_by: "apikey:sandboxdemo",
      started_at: null,
      result: null,
    });
    const busy = await run(inactive);
    expect(busy.status).toBe(409);
    expect(busy.body.reason_code).toBe("workflow_execution_in_progress");
    const execution = `/workflows/executions/${queued.body.id}`;
    await at(3);
    expect((await env.client.get(execution)).body).toMatchObject({
      status: "running",
      finished_at: null,
    });
    await at(11);
    const done = (await env.client.get(execution)).body;
    expect(done).toMatchObject({ status: "succeeded", error: null });
    expect(done.result.checked).toBeGreaterThan(0);
    expect((await env.client.get(path(inactive))).body.last_run_at).toBe(queued.body.queued_at);
    const history = await env.client.get("/workflows/history", {
      query: { workflow_key: inactive },
    });
    expect(history.body.items.slice(0, 2).map((h: any) => h.event)).toEqual([
      "run_succeeded",
      "run_requested",
    ]);
    expect((await run(inactive)).status).toBe(202);
    const active = definitions().find((w) => w.state === "active" && w.can_toggle)!.key;
    expect((await run(active)).status).toBe(202);
  });

  it("puts a definition in error when its run fails, until it is repaired", async () => {
    const key = (
      await create({ configuration: { operation_ids: [NO_SUCH_OPERATION] }, name: "Cassé" })
    ).body.key;
    await toggle(key, true);
    const queued = await run(key);
    await at(11);
    const failed = (await env.client.get(`/workflows/executions/${queued.body.id}`)).body;
    expect(failed).toMatchObject({ status: "failed", result: null });
    expect(failed.error).toContain(NO_SUCH_OPERATION);
    const definition = (await env.client.get(path(key))).body;
    expect(definition).toMatchObject({
      state: "error",
      enabled: false,
      last_error: failed.error,
      next_run_at: null,
    });
    const repaired = await env.client.write("PATCH", path(key), { configuration: {} });
    expect(repaired.body.state).toBe("inactive");
  });

  it("runs an active definition on its schedule, once, then waits for the next slot", async () => {
    const key = (await create({ schedule: "0 8 * * *", name: "Quotidien" })).body.key;
    const { next_run_at: first } = (await toggle(key, true)).body;
    const inactive = definitionIn("inactive").key;
    const seconds = (Date.parse(first) - Date.now()) / 1000;
    // Two days after the first slot: one run, for the latest missed slot, not one per day.
    await at(seconds + 2 * 86_400 + 60);
    const executions = await env.client.get("/workflows/executions", {
      query: { workflow_key: key },
    });
    expect(executions.body.items).toHaveLength(1);
    expect(executions.body.items[0]).toMatchObject({
      trigger: "schedule",
      requested_by: "system",
      queued_at: first,
      status: "succeeded",
    });
    const definition = (await env.client.get(path(key))).body;
    expect(Date.parse(definition.next_run_at)).toBe(Date.parse(first) + 3 * 86_400_000);
    expect(definition.last_run_at).toBe(first);
    // An inactive definition waits.
    const idle = await env.client.get("/workflows/executions", {
      query: { workflow_key: inactive, trigger: "schedule" },
    });
    expect(idle.body.total).toBe(0);
  });
});
