import { randomUUID } from "node:crypto";
import { z } from "zod";
import {
  IMPORT_ROWS_PER_SECOND,
  type ImportJobRecord,
  importTimeline,
} from "../data/operations.js";
import { serviceAccount } from "../keys.js";
import { component, pageOf } from "../models/common.js";
import {
  IMPORT_STATUSES,
  type ImportJob,
  type ImportStatus,
  importJobSchema,
} from "../models/operations.js";
import { type FieldError, invalid, notFound, Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { uuid } from "../validation.js";
import { isoAt } from "./mutations.js";
import {
  commitOperation,
  findByExternalId,
  type ImportRow,
  importRowSchema,
  type PreparedWrite,
  prepareOperation,
} from "./operation-writes.js";
import { page, pageQuery } from "./pagination.js";

type ImportMove = "start" | "succeed" | "fail";

/**
 * An import job's life (the sandbox's; spec part 2 does not show import jobs): queued, running,
 * then succeeded or failed for good. Only the sandbox's clock moves it (data/operations.ts says
 * how fast), so that a client polling it and a test moving the clock see the same thing.
 */
export const IMPORT_MOVES: Transitions<ImportStatus, ImportMove> = {
  start: ["queued"],
  succeed: ["running"],
  fail: ["running"],
};

const MAX_ROWS = 500;
const MAX_ERRORS = 50;

/** Where a job stands at `nowMs`, from its creation time and size alone. */
export function importProgress(createdAtMs: number, rows: number, nowMs: number) {
  const { startsAt, finishesAt } = importTimeline(createdAtMs, rows);
  if (nowMs < startsAt) return { phase: "queued" as const, processed: 0, startsAt, finishesAt };
  if (nowMs >= finishesAt)
    return { phase: "finished" as const, processed: rows, startsAt, finishesAt };
  const processed = Math.min(
    rows - 1,
    Math.floor(((nowMs - startsAt) / 1_000) * IMPORT_ROWS_PER_SECOND),
  );
  return { phase: "running" as const, processed, startsAt, finishesAt };
}

/**
 * Brings every unfinished import up to the sandbox's clock. Called by the routes that read or
 * write operations, so that an import's effects appear at the first look after it finished.
 */
export function settleImports(state: SandboxState, nowMs: number): void {
  for (const job of state.data.operationImports) {
    if (job.status === "succeeded" || job.status === "failed") continue;
    const progress = importProgress(Date.parse(job.created_at), job.total_rows, nowMs);
    if (progress.phase === "queued") continue;
    if (job.status === "queued") {
      assertTransition(IMPORT_MOVES, "start", job.status, `Import ${job.id}`);
      Object.assign(job, { status: "running", started_at: isoAt(progress.startsAt) });
    }
    job.processed_rows = progress.processed;
    if (progress.phase === "finished") finishImport(state, job, progress.finishesAt);
  }
}

/**
 * Applies every row, or none: each row is checked by the rules of the routes (PUT by external
 * id, or creation), against the data as it stands when the job finishes; one refused row fails
 * the job and leaves the operations as they were.
 */
function finishImport(state: SandboxState, job: ImportJobRecord, finishedAtMs: number): void {
  const at = isoAt(finishedAtMs);
  const claimed = new Set<string>();
  const writes: PreparedWrite[] = [];
  const errors: ImportJob["errors"] = [];
  (job.rows as ImportRow[]).forEach((row, index) => {
    const { external_id: externalId, ...body } = row;
    try {
      const current = findByExternalId(state, externalId) ?? null;
      if (current && job.mode === "create_only") {
        throw new Problem(409, `External id ${externalId} is already operation ${current.id}.`, {
          reasonCode: "external_id_taken",
        });
      }
      writes.push(
        prepareOperation(state, current, body, current ? "sync" : "create", {
          at,
          externalId,
          claimed,
        }),
      );
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      errors.push({
        row: index,
        external_id: externalId,
        reason_code: error.extras.reasonCode ?? "refused",
        message: error.detail,
      });
    }
  });
  job.rows = [];
  job.finished_at = at;
  job.processed_rows = job.total_rows;
  if (errors.length > 0) {
    assertTransition(IMPORT_MOVES, "fail", job.status, `Import ${job.id}`);
    Object.assign(job, { status: "failed", errors: errors.slice(0, MAX_ERRORS) });
    return;
  }
  assertTransition(IMPORT_MOVES, "succeed", job.status, `Import ${job.id}`);
  const result = { created: 0, updated: 0, unchanged: 0 };
  for (const write of writes) {
    commitOperation(state, write, finishedAtMs, job.created_by);
    if (!write.current) result.created++;
    else if (write.changed) result.updated++;
    else result.unchanged++;
  }
  Object.assign(job, { status: "succeeded", result });
}

/** The job as published: its rows stay inside; `expected_finish_at` says when to look again. */
function published(job: ImportJobRecord): ImportJob {
  const { rows: _rows, ...rest } = job;
  const finished = job.status === "succeeded" || job.status === "failed";
  const { finishesAt } = importTimeline(Date.parse(job.created_at), job.total_rows);
  return { ...rest, expected_finish_at: finished ? null : isoAt(finishesAt) };
}

function findImport(state: SandboxState, id: string): ImportJobRecord {
  const job = state.data.operationImports.find((j) => j.id === id.toLowerCase());
  if (!job) throw notFound("import", id, "import_not_found");
  return job;
}

export const operationImportRoutes = [
  defineRoute({
    id: "operation_imports_list",
    family: "operations",
    method: "GET",
    path: "/operations/imports",
    scope: "operations:read",
    kind: "read",
    summary: "List operation imports, newest first",
    query: z.strictObject({ status: z.enum(IMPORT_STATUSES).optional(), ...pageQuery(100, 20) }),
    response: { status: 200, schema: component("OperationImportJobList", pageOf(importJobSchema)) },
    handle({ query, state, now }) {
      settleImports(state, now());
      const jobs = state.data.operationImports
        .filter((j) => query.status === undefined || j.status === query.status)
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id))
        .map(published);
      return json(page(jobs, query));
    },
  }),
  defineRoute({
    id: "operation_import_create",
    family: "operations",
    method: "POST",
    path: "/operations/imports",
    scope: "operations:write",
    kind: "write",
    summary: "Import operations by external id",
    description: `Up to ${MAX_ROWS} rows, each a PUT /operations/external/{external_id} body with its \`external_id\`. The job is queued 2 s, then runs at ${IMPORT_ROWS_PER_SECOND} rows a second (at least 1 s), by the sandbox's clock; it then applies every row or, if any row is refused, none (\`failed\`, with one error per row).`,
    body: z.strictObject({
      source_name: z.string().trim().min(1).max(200).nullish(),
      mode: z.enum(["upsert", "create_only"]).default("upsert"),
      rows: z.array(importRowSchema).min(1).max(MAX_ROWS),
    }),
    response: { status: 202, schema: importJobSchema },
    refusals: { 422: ["duplicate_external_id"] },
    example: ({ state }) => {
      const operation = state.data.operations.find((o) => o.external_id !== null);
      return {
        body: {
          source_name: "export_pms_contrat.csv",
          rows: operation
            ? [{ external_id: operation.external_id, name: operation.name }]
            : [{ external_id: "PMS-OPE-CONTRAT", name: "Les Jardins du Contrat – Lyon" }],
        },
      };
    },
    handle({ body, state, key, now }) {
      const seen = new Map<string, number>();
      const duplicates: FieldError[] = [];
      body.rows.forEach((row, index) => {
        const first = seen.get(row.external_id);
        if (first === undefined) seen.set(row.external_id, index);
        else
          duplicates.push({
            field: `rows[${index}].external_id`,
            rule: "unique in the import",
            message: `repeats rows[${first}].external_id`,
          });
      });
      if (duplicates.length > 0) throw invalid(duplicates, "duplicate_external_id");
      settleImports(state, now());
      const job: ImportJobRecord = {
        id: randomUUID(),
        status: "queued",
        source_name: body.source_name ?? null,
        mode: body.mode,
        total_rows: body.rows.length,
        processed_rows: 0,
        result: null,
        errors: [],
        created_by: serviceAccount(key),
        created_at: isoAt(now()),
        started_at: null,
        finished_at: null,
        expected_finish_at: null,
        rows: body.rows,
      };
      state.data.operationImports.push(job);
      return json(published(job), 202);
    },
  }),
  defineRoute({
    id: "operation_import_get",
    family: "operations",
    method: "GET",
    path: "/operations/imports/{import_id}",
    scope: "operations:read",
    kind: "read",
    summary: "Follow an operation import",
    params: z.strictObject({ import_id: uuid }),
    response: { status: 200, schema: importJobSchema },
    refusals: { 404: ["import_not_found"] },
    handle({ params, state, now }) {
      settleImports(state, now());
      return json(published(findImport(state, params.import_id)));
    },
  }),
];
