import { describe, expect, it } from "vitest";
import { IMPORT_QUEUE_MS } from "../src/data/operations.js";
import { IMPORT_MOVES, importProgress } from "../src/handlers/operation-imports.js";
import { Problem } from "../src/problem.js";
import { assertTransition } from "../src/transitions.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

// Each test starts from the seeded data: no test sees another one's writes.
const env = sandboxPerTest({ rateLimit: false });

const synced = (status: string) => {
  const operation = env.data.operations.find((o) => o.status === status && o.external_id !== null);
  if (!operation) throw new Error(`no synchronised operation is ${status}`);
  return operation;
};
/** Sets the sandbox's clock to an instant, whatever the real time it took to get here. */
const clockAt = (ms: number) => env.sandbox.control.skewClock((ms - Date.now()) / 1_000);
const job = async (id: string) => (await env.client.get(`/operations/imports/${id}`)).body;

describe("import jobs, by the sandbox's clock", () => {
  it("are queued, then run, then succeed and apply every row", async () => {
    const moving = synced("instruction");
    const version = moving.version;
    const rows = [
      { external_id: moving.external_id, name: moving.name, status: "travaux" },
      ...Array.from({ length: 29 }, (_, i) => ({
        external_id: `PMS-OPE-IMPORT-${i}`,
        name: `Résidence des Arts ${i} – Tours`,
        status: "sourcing",
      })),
    ];
    const created = await env.client.write("POST", "/operations/imports", {
      source_name: "export_pms_novembre.csv",
      rows,
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({
      status: "queued",
      mode: "upsert",
      total_rows: 30,
      processed_rows: 0,
      result: null,
      created_by: "apikey:sandboxdemo",
    });
    // Queued 2 s, then 30 rows at 20 a second: 2 s of running.
    const createdAt = Date.parse(created.body.created_at);
    expect(Date.parse(created.body.expected_finish_at) - createdAt).toBe(4_000);
    expect(moving.status).toBe("instruction");

    clockAt(createdAt + 3_000);
    const running = await job(created.body.id);
    expect(running).toMatchObject({ status: "running", finished_at: null });
    expect(Date.parse(running.started_at)).toBe(createdAt + IMPORT_QUEUE_MS);
    expect(running.processed_rows).toBeGreaterThan(0);
    expect(running.processed_rows).toBeLessThan(30);
    expect(moving.status).toBe("instruction");

    clockAt(createdAt + 4_500);
    const listed = await env.client.get("/operations/imports", { query: { status: "succeeded" } });
    const done = listed.body.items.find((j: any) => j.id === created.body.id);
    expect(done).toMatchObject({
      status: "succeeded",
      processed_rows: 30,
      result: { created: 29, updated: 1, unchanged: 0 },
      errors: [],
      expected_finish_at: null,
    });
    expect(Date.parse(done.finished_at)).toBe(createdAt + 4_000);
    expect(moving).toMatchObject({ status: "travaux", version: version + 1 });
    const imported = await env.client.get("/operations/external/PMS-OPE-IMPORT-7");
    expect(imported.body).toMatchObject({ name: "Résidence des Arts 7 – Tours", version: 1 });
  });

  it("fail without applying anything when one row is refused, naming each refused row", async () => {
    const closed = synced("cloturee");
    const rows = [
      { external_id: "PMS-OPE-IMPORT-NEW", name: "Le Clos Voltaire – Dijon" },
      { external_id: closed.external_id, name: closed.name, status: "travaux" },
      { external_id: "PMS-OPE-IMPORT-BAD", name: "Villa Pasteur – Nice", classe_actif: "chateaux" },
    ];
    const created = await env.client.write("POST", "/operations/imports", { rows });
    env.sandbox.control.skewClock(10);
    const failed = await job(created.body.id);
    expect(failed).toMatchObject({ status: "failed", result: null, processed_rows: 3 });
    expect(failed.errors).toEqual([
      expect.objectContaining({
        row: 1,
        external_id: closed.external_id,
        reason_code: "invalid_transition",
      }),
      expect.objectContaining({ row: 2, reason_code: "unknown_taxonomy_code" }),
    ]);
    expect(env.data.operations.some((o) => o.external_id === "PMS-OPE-IMPORT-NEW")).toBe(false);
    expect(closed.status).toBe("cloturee");
  });

  it("in create_only mode, refuse known external ids; and refuse an id twice in one import", async () => {
    const known = synced("travaux");
    const created = await env.client.write("POST", "/operations/imports", {
      mode: "create_only",
      rows: [{ external_id: known.external_id, name: known.name }],
    });
    expect(created.status).toBe(202);
    env.sandbox.control.skewClock(10);
    expect((await job(created.body.id)).errors[0].reason_code).toBe("external_id_taken");
    const twice = await env.client.write("POST", "/operations/imports", {
      rows: [
        { external_id: "PMS-X-1", name: "A" },
        { external_id: "PMS-X-1", name: "B" },
      ],
    });
    expect(twice.status).toBe(422);
    expect(twice.body.reason_code).toBe("duplicate_external_id");
    expect(twice.body.errors[0].field).toBe("rows[1].external_id");
  });

  it("are seeded as past imports, succeeded and failed, newest first", async () => {
    const { body } = await env.client.get("/operations/imports");
    expect(body.total).toBe(4);
    expect(new Set(body.items.map((j: any) => j.status))).toEqual(new Set(["succeeded", "failed"]));
    const created = body.items.map((j: any) => j.created_at);
    expect(created).toEqual([...created].sort().reverse());
    const failed = body.items.find((j: any) => j.errors.length > 0);
    expect(env.data.operations.some((o) => o.external_id === failed.errors[0].external_id)).toBe(
      true,
    );
  });
});

describe("the import state machine", () => {
  it("moves with time alone: queued, running, finished", () => {
    const t0 = Date.parse("2026-01-05T09:00:00Z");
    expect(importProgress(t0, 50, t0 + 1_999).phase).toBe("queued");
    expect(importProgress(t0, 50, t0 + 2_000)).toMatchObject({ phase: "running", processed: 0 });
    expect(importProgress(t0, 50, t0 + 3_500)).toMatchObject({ phase: "running", processed: 30 });
    // 50 rows take 3 s at 20 a second.
    expect(importProgress(t0, 50, t0 + 5_000)).toMatchObject({ phase: "finished", processed: 50 });
  });

  it("allows start from queued, success and failure from running, and nothing else", () => {
    expect(() => assertTransition(IMPORT_MOVES, "start", "queued", "Import")).not.toThrow();
    expect(() => assertTransition(IMPORT_MOVES, "succeed", "running", "Import")).not.toThrow();
    expect(() => assertTransition(IMPORT_MOVES, "fail", "running", "Import")).not.toThrow();
    for (const [move, from] of [
      ["start", "succeeded"],
      ["succeed", "queued"],
      ["fail", "failed"],
    ] as const) {
      try {
        assertTransition(IMPORT_MOVES, move, from, "Import");
        expect.unreachable(`${move} from ${from}`);
      } catch (error) {
        expect(error).toBeInstanceOf(Problem);
        expect((error as Problem).extras.reasonCode).toBe("invalid_transition");
      }
    }
  });
});
