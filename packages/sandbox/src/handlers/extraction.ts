import { randomUUID } from "node:crypto";
import { z } from "zod";
import { NO_TEXT_LAYER } from "../data/extraction.js";
import { defaultDefinitions, extractFields } from "../field-extraction.js";
import { type SandboxKey, serviceAccount } from "../keys.js";
import {
  EXTRACTION_STATUSES,
  type ExtractionStatus,
  extractionJobListSchema,
  extractionJobSchema,
  extractionResultsSchema,
  type StoredExtractionJob,
} from "../models/extraction.js";
import type { FieldDefinition } from "../models/taxonomies.js";
import { type FieldError, invalid, notFound, Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { uuid } from "../validation.js";
import { isMember, openDocument } from "./dataroom-access.js";
import { page, pageQuery } from "./pagination.js";

/** How long a job created through the API waits in the queue, then runs. */
export const QUEUE_MS = 2_000;
export const RUN_MS = 8_000;

type Move = "start" | "succeed" | "fail" | "cancel";

/**
 * The job lifecycle (the sandbox's choice; the spec names no states): the sandbox starts and
 * finishes jobs on their schedule; a caller may only cancel, while the job is queued or running.
 */
export const EXTRACTION_MOVES: Transitions<ExtractionStatus, Move> = {
  start: ["queued"],
  succeed: ["running"],
  fail: ["running"],
  cancel: ["queued", "running"],
};

/**
 * Moves jobs along their schedule up to `nowMs`: read lazily on every extraction request (and
 * before a document is deleted), so moving the sandbox's clock is enough to see them finish.
 */
export function advanceJobs(state: SandboxState, nowMs: number): void {
  for (const job of state.data.extractionJobs) {
    const starts = Date.parse(job.starts_at);
    const finishes = Date.parse(job.finishes_at);
    if (job.status === "queued" && nowMs >= starts) {
      assertTransition(EXTRACTION_MOVES, "start", job.status, `Job ${job.id}`);
      Object.assign(job, {
        status: "running",
        started_at: job.starts_at,
        updated_at: job.starts_at,
      });
    }
    if (job.status === "running" && nowMs >= finishes) {
      const failed = "error" in job.outcome;
      assertTransition(EXTRACTION_MOVES, failed ? "fail" : "succeed", job.status, `Job ${job.id}`);
      Object.assign(job, {
        status: failed ? "failed" : "succeeded",
        error: "error" in job.outcome ? job.outcome.error : null,
        progress: failed ? job.progress : 100,
        estimated_completion_at: null,
        finished_at: job.finishes_at,
        updated_at: job.finishes_at,
      });
    }
    if (job.status === "running") {
      job.progress = Math.min(99, Math.floor((100 * (nowMs - starts)) / (finishes - starts)));
    }
  }
}

/** Whether a document has a job that is not over: it may not be deleted meanwhile. */
export function hasActiveJob(state: SandboxState, documentId: string, nowMs: number): boolean {
  advanceJobs(state, nowMs);
  return state.data.extractionJobs.some(
    (j) => j.document_id === documentId && (j.status === "queued" || j.status === "running"),
  );
}

/** The public job: the schedule and planned outcome stay inside the sandbox. */
function publicJob(job: StoredExtractionJob) {
  const { starts_at: _s, finishes_at: _f, outcome: _o, dataroom_id: _d, ...shown } = job;
  return shown;
}

/** Jobs follow their document's dataroom rights, even once the document is deleted. */
function mayRead(state: SandboxState, key: SandboxKey, job: StoredExtractionJob): boolean {
  return job.dataroom_id === null || isMember(state, key, job.dataroom_id);
}

function findJob(state: SandboxState, key: SandboxKey, id: string, nowMs: number) {
  advanceJobs(state, nowMs);
  const job = state.data.extractionJobs.find((j) => j.id === id.toLowerCase());
  if (!job) throw notFound("extraction job", id, "extraction_job_not_found");
  if (!mayRead(state, key, job)) {
    throw new Problem(403, "This key is not a member of the dataroom of this job's document.", {
      reasonCode: "dataroom_access_denied",
    });
  }
  return job;
}

/** The definitions a caller asked for: each known and available, else 422 naming it. */
function requestedDefinitions(
  definitions: readonly FieldDefinition[],
  keys: readonly string[],
): FieldDefinition[] {
  const errors: FieldError[] = [];
  const found = keys.flatMap((key, i) => {
    const definition = definitions.find((d) => d.key === key);
    if (definition?.availability !== "available") {
      errors.push({
        field: `field_keys[${i}]`,
        rule: "available field definition",
        message: definition
          ? `${key} is ${definition.availability}`
          : `${key} is not a field definition (GET /field-definitions)`,
      });
      return [];
    }
    return [definition];
  });
  if (errors.length > 0) throw invalid(errors, "unknown_field_key");
  return found;
}

const jobParams = z.strictObject({ job_id: uuid });
const EXTRACTABLE = ["application/pdf", "text/plain", "text/csv"];

export const extractionRoutes = [
  defineRoute({
    id: "extraction_job_create",
    family: "ai_extraction",
    method: "POST",
    path: "/documents/{document_id}/extraction-jobs",
    scope: "ai_extraction:write",
    kind: "write",
    summary: "Start an AI extraction job on a document",
    description: `Reads the fields of \`field_keys\` (field definitions; by default the available ones that apply to what the document is attached to). The job is queued, runs, then succeeds or fails (a scan without text fails with \`no_text_layer\`): about ${QUEUE_MS / 1000} s in the queue and ${RUN_MS / 1000} s running. One job at a time per document.`,
    params: z.strictObject({ document_id: uuid }),
    body: z
      .strictObject({
        field_keys: z
          .array(z.string().min(1).max(100))
          .min(1)
          .max(30)
          .refine((keys) => new Set(keys).size === keys.length, "must not repeat a key")
          .optional(),
      })
      .optional(),
    response: { status: 202, schema: extractionJobSchema },
    refusals: {
      403: ["dataroom_access_denied"],
      404: ["document_not_found"],
      409: ["file_not_available", "document_not_extractable", "extraction_in_progress"],
      422: ["unknown_field_key"],
    },
    example: ({ state }) => {
      const busy = new Set(
        state.data.extractionJobs
          .filter((j) => j.status === "queued" || j.status === "running")
          .map((j) => j.document_id),
      );
      const document = state.data.documents.find(
        (d) =>
          d.dataroom === null &&
          d.file_status === "available" &&
          d.category === "reporting" &&
          !busy.has(d.id),
      );
      return document ? { params: { document_id: document.id } } : {};
    },
    handle({ params, body, state, key, now }) {
      const nowMs = now();
      const document = openDocument(state, key, params.document_id);
      if (document.file_status !== "available") {
        throw new Problem(409, `The file of document ${document.id} is ${document.file_status}.`, {
          reasonCode: "file_not_available",
        });
      }
      if (!EXTRACTABLE.includes(document.content_type)) {
        throw new Problem(
          409,
          `Extraction reads ${EXTRACTABLE.join(", ")} files; this one is ${document.content_type}.`,
          { reasonCode: "document_not_extractable" },
        );
      }
      if (hasActiveJob(state, document.id, nowMs)) {
        throw new Problem(409, `Document ${document.id} already has a job queued or running.`, {
          reasonCode: "extraction_in_progress",
        });
      }
      const definitions = body?.field_keys
        ? requestedDefinitions(state.data.fieldDefinitions, body.field_keys)
        : defaultDefinitions(
            state.data.fieldDefinitions,
            document.attachments.map((a) => a.target_type),
          );
      const id = randomUUID();
      const created = new Date(nowMs).toISOString();
      const finishes = new Date(nowMs + QUEUE_MS + RUN_MS).toISOString();
      const job: StoredExtractionJob = {
        id,
        document_id: document.id,
        document_name: document.name,
        status: "queued",
        field_keys: definitions.map((d) => d.key),
        progress: 0,
        estimated_completion_at: finishes,
        error: null,
        requested_by: serviceAccount(key),
        created_at: created,
        started_at: null,
        finished_at: null,
        updated_at: created,
        starts_at: new Date(nowMs + QUEUE_MS).toISOString(),
        finishes_at: finishes,
        outcome:
          document.text === ""
            ? { error: NO_TEXT_LAYER }
            : { fields: extractFields(document.text, definitions, id) },
        dataroom_id: document.dataroom?.id ?? null,
      };
      state.data.extractionJobs.push(job);
      return json(publicJob(job), 202);
    },
  }),
  defineRoute({
    id: "extraction_jobs_list",
    family: "ai_extraction",
    method: "GET",
    path: "/ai-extraction/jobs",
    scope: "ai_extraction:read",
    kind: "read",
    summary: "List AI extraction jobs, newest first",
    query: z.strictObject({
      status: z.enum(EXTRACTION_STATUSES).optional(),
      document_id: uuid.optional(),
      ...pageQuery(100, 20),
    }),
    response: { status: 200, schema: extractionJobListSchema },
    handle({ query, state, key, now }) {
      advanceJobs(state, now());
      const jobs = state.data.extractionJobs
        .filter(
          (j) =>
            mayRead(state, key, j) &&
            (query.status === undefined || j.status === query.status) &&
            (query.document_id === undefined || j.document_id === query.document_id.toLowerCase()),
        )
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id))
        .map(publicJob);
      return json(page(jobs, query));
    },
  }),
  defineRoute({
    id: "extraction_job_get",
    family: "ai_extraction",
    method: "GET",
    path: "/ai-extraction/jobs/{job_id}",
    scope: "ai_extraction:read",
    kind: "read",
    summary: "Follow an AI extraction job",
    params: jobParams,
    response: { status: 200, schema: extractionJobSchema },
    refusals: { 403: ["dataroom_access_denied"], 404: ["extraction_job_not_found"] },
    handle: ({ params, state, key, now }) =>
      json(publicJob(findJob(state, key, params.job_id, now()))),
  }),
  defineRoute({
    id: "extraction_job_results",
    family: "ai_extraction",
    method: "GET",
    path: "/ai-extraction/jobs/{job_id}/results",
    scope: "ai_extraction:read",
    kind: "read",
    summary: "Get the fields a finished job extracted",
    description:
      "Each requested field definition with `found`, its typed `value`, the `excerpt` it was read from and a `confidence` between 0 and 1. Only once the job succeeded: 409 `extraction_not_finished` while it is queued or running, `extraction_unsuccessful` when it failed or was cancelled.",
    params: jobParams,
    response: { status: 200, schema: extractionResultsSchema },
    refusals: {
      403: ["dataroom_access_denied"],
      404: ["extraction_job_not_found"],
      409: ["extraction_not_finished", "extraction_unsuccessful"],
    },
    example: ({ state }) => {
      const done = state.data.extractionJobs.find(
        (j) => j.status === "succeeded" && j.dataroom_id === null,
      );
      return done ? { params: { job_id: done.id } } : {};
    },
    handle({ params, state, key, now }) {
      const job = findJob(state, key, params.job_id, now());
      if (job.status === "queued" || job.status === "running") {
        throw new Problem(409, `Job ${job.id} is ${job.status}; results come once it succeeded.`, {
          reasonCode: "extraction_not_finished",
        });
      }
      if (job.status !== "succeeded" || !("fields" in job.outcome)) {
        throw new Problem(409, `Job ${job.id} ${job.status}; it has no results.`, {
          reasonCode: "extraction_unsuccessful",
        });
      }
      return json({
        job_id: job.id,
        document_id: job.document_id,
        completed_at: job.finished_at ?? job.finishes_at,
        fields: job.outcome.fields,
      });
    },
  }),
  defineRoute({
    id: "extraction_job_cancel",
    family: "ai_extraction",
    method: "POST",
    path: "/ai-extraction/jobs/{job_id}/cancel",
    scope: "ai_extraction:write",
    kind: "write",
    summary: "Cancel a queued or running AI extraction job",
    params: jobParams,
    response: { status: 200, schema: extractionJobSchema },
    refusals: {
      403: ["dataroom_access_denied"],
      404: ["extraction_job_not_found"],
      409: ["invalid_transition"],
    },
    example: ({ state }) => {
      const active = state.data.extractionJobs.find(
        (j) => EXTRACTION_MOVES.cancel.includes(j.status) && j.dataroom_id === null,
      );
      return active ? { params: { job_id: active.id } } : {};
    },
    handle({ params, state, key, now }) {
      const nowMs = now();
      const job = findJob(state, key, params.job_id, nowMs);
      assertTransition(EXTRACTION_MOVES, "cancel", job.status, `Job ${job.id}`);
      const at = new Date(nowMs).toISOString();
      Object.assign(job, {
        status: "cancelled",
        estimated_completion_at: null,
        finished_at: at,
        updated_at: at,
      });
      return json(publicJob(job));
    },
  }),
];
