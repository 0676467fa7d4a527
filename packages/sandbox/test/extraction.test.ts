import { describe, expect, it } from "vitest";
import { QUEUE_MS, RUN_MS } from "../src/handlers/extraction.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

// Each test starts from the seeded data: the lifecycle is about state and the clock.
const env = sandboxPerTest({ rateLimit: false });

const idle = (test: (d: (typeof env.data)["documents"][number]) => boolean) =>
  env.data.documents.find(
    (d) =>
      d.dataroom === null &&
      d.file_status === "available" &&
      test(d) &&
      !env.data.extractionJobs.some((j) => j.document_id === d.id),
  )!;
const start = (documentId: string, body?: unknown) =>
  env.client.write("POST", `/documents/${documentId}/extraction-jobs`, body);
const job = (id: string) => env.client.get(`/ai-extraction/jobs/${id}`);
/** Moves the sandbox's clock this many milliseconds past the machine's. */
const advanceBy = (ms: number) => env.sandbox.control.skewClock(Math.ceil(ms / 1000));

describe("the extraction job lifecycle", () => {
  it("queues, runs, then succeeds with the fields the document states", async () => {
    const report = idle((d) => d.category === "reporting" && d.file.kind === "pdf");
    const operation = env.data.operations.find((o) => o.id === report.attachments[0]!.target_id)!;
    const created = await start(report.id);
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({
      status: "queued",
      progress: 0,
      document_id: report.id,
      requested_by: "apikey:sandboxdemo",
      started_at: null,
    });
    expect(created.body.field_keys).toContain("taux_commercialisation");
    const early = await env.client.get(`/ai-extraction/jobs/${created.body.id}/results`);
    expect(early.status).toBe(409);
    expect(early.body.reason_code).toBe("extraction_not_finished");

    advanceBy(QUEUE_MS + RUN_MS / 2);
    const running = await job(created.body.id);
    expect(running.body.status).toBe("running");
    expect(running.body.progress).toBeGreaterThan(0);
    expect(running.body.progress).toBeLessThan(100);

    advanceBy(QUEUE_MS + RUN_MS + 1000);
    const done = await job(created.body.id);
    expect(done.body).toMatchObject({
      status: "succeeded",
      progress: 100,
      estimated_completion_at: null,
    });
    const results = await env.client.get(`/ai-extraction/jobs/${created.body.id}/results`);
    expect(results.status).toBe(200);
    const field = (key: string) => results.body.fields.find((f: any) => f.field_key === key);
    expect(field("taux_commercialisation")).toMatchObject({
      found: true,
      value: operation.data.taux_commercialisation,
      unit: "%",
    });
    expect(field("nombre_lots").value).toBe(operation.data.nombre_lots);
    expect(field("date_livraison_prevue").value).toBe(operation.data.date_livraison_prevue);
    expect(field("certification_environnementale").value).toBe(
      operation.data.certification_environnementale,
    );
    for (const f of results.body.fields) {
      expect(f.confidence).toBeGreaterThanOrEqual(f.found ? 0.5 : 0);
      expect(f.confidence).toBeLessThanOrEqual(1);
    }
  });

  it("fails on a scan without a text layer, and has no results", async () => {
    const scan = idle((d) => d.file.kind === "pdf" && d.text === "");
    const created = await start(scan.id);
    advanceBy(QUEUE_MS + RUN_MS + 1000);
    const failed = await job(created.body.id);
    expect(failed.body).toMatchObject({ status: "failed", error: { code: "no_text_layer" } });
    const results = await env.client.get(`/ai-extraction/jobs/${created.body.id}/results`);
    expect(results.status).toBe(409);
    expect(results.body.reason_code).toBe("extraction_unsuccessful");
  });

  it("cancels a queued job and a running one, and nothing that is over", async () => {
    // The seeded queued job waits for tomorrow's batch: no race with the clock.
    const queued = env.data.extractionJobs.find((j) => j.status === "queued")!;
    const cancelled = await env.client.write(
      "POST",
      `/ai-extraction/jobs/${queued.id}/cancel`,
      undefined,
    );
    expect(cancelled.body).toMatchObject({ status: "cancelled", estimated_completion_at: null });
    expect(cancelled.body.finished_at).toEqual(expect.any(String));

    const b = await start(idle((d) => d.category === "financier" && d.file.kind === "pdf").id);
    advanceBy(QUEUE_MS + 1000);
    expect((await job(b.body.id)).body.status).toBe("running");
    const stopped = await env.client.write(
      "POST",
      `/ai-extraction/jobs/${b.body.id}/cancel`,
      undefined,
    );
    expect(stopped.body.status).toBe("cancelled");
    // A cancelled job stays cancelled whatever its schedule said.
    advanceBy(QUEUE_MS + RUN_MS + 5000);
    expect((await job(b.body.id)).body.status).toBe("cancelled");

    for (const status of ["succeeded", "failed", "cancelled"]) {
      const over = env.data.extractionJobs.find((j) => j.status === status)!;
      const refused = await env.client.write(
        "POST",
        `/ai-extraction/jobs/${over.id}/cancel`,
        undefined,
      );
      expect(refused.status, status).toBe(409);
      expect(refused.body).toMatchObject({
        reason_code: "invalid_transition",
        route_id: "extraction_job_cancel",
      });
      expect(refused.body.detail).toContain(status);
    }
  });

  it("seeds every state, the queued and running ones behind a backlog that clears tomorrow", async () => {
    const { body } = await env.client.get("/ai-extraction/jobs", { query: { limit: 100 } });
    expect(new Set(body.items.map((j: any) => j.status))).toEqual(
      new Set(["queued", "running", "succeeded", "failed", "cancelled"]),
    );
    const queued = await env.client.get("/ai-extraction/jobs", { query: { status: "queued" } });
    expect(queued.body.items[0].estimated_completion_at > new Date().toISOString()).toBe(true);
    const dates = body.items.map((j: any) => j.created_at);
    expect(dates).toEqual([...dates].sort().reverse());
  });
});

describe("extraction requests", () => {
  it("run one job at a time per document, on a file that is there and readable", async () => {
    const report = idle((d) => d.category === "reporting");
    expect((await start(report.id)).status).toBe(202);
    const again = await start(report.id);
    expect(again.status).toBe(409);
    expect(again.body.reason_code).toBe("extraction_in_progress");
    const archived = env.data.documents.find((d) => d.file_status !== "available")!;
    expect((await start(archived.id)).body.reason_code).toBe("file_not_available");
    const workbook = idle((d) => d.file.kind === "xlsx");
    expect((await start(workbook.id)).body.reason_code).toBe("document_not_extractable");
  });

  it("take the field definitions asked for, refusing unknown and unavailable ones", async () => {
    const accounts = idle((d) => d.category === "financier" && d.file.kind === "pdf");
    const picked = await start(accounts.id, { field_keys: ["effectif", "chiffre_affaires"] });
    expect(picked.body.field_keys).toEqual(["effectif", "chiffre_affaires"]);
    const refused = await start(idle((d) => d.category === "kyc").id, {
      field_keys: ["effectif", "notation_banque_de_france", "couleur"],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.reason_code).toBe("unknown_field_key");
    expect(refused.body.errors.map((e: any) => e.field)).toEqual([
      "field_keys[1]",
      "field_keys[2]",
    ]);
  });

  it("follow the document's dataroom rights", async () => {
    const litigation = env.data.datarooms.find((d) => d.name.includes("Précontentieux"))!;
    const document = env.data.documents.find((d) => d.dataroom?.id === litigation.id)!;
    const refused = await start(document.id);
    expect(refused.status).toBe(403);
    expect(refused.body.reason_code).toBe("dataroom_access_denied");
    // A job the key may not read is neither listed nor shown.
    litigation.members.push("apikey:sandboxdemo");
    const created = await start(document.id);
    litigation.members.pop();
    expect((await job(created.body.id)).status).toBe(403);
    const listed = await env.client.get("/ai-extraction/jobs", { query: { limit: 100 } });
    expect(listed.body.items.map((j: any) => j.id)).not.toContain(created.body.id);
  });
});
