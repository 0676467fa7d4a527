import { z } from "zod";
import { component, dateTime, jsonObject, uuid } from "./common.js";

/** Spec part 2, Operation (list item): the fields the spec names keep its names and types. */
const operationListFields = {
  id: uuid,
  relationship_status: z.enum(["attached", "pending_attachment"]),
  relationship_label: z.string(),
  name: z.string(),
  status: z.string(),
  phase: z.string(),
  version: z.int().min(1),
  created_at: dateTime,
  updated_at: dateTime,
  spv_id: uuid.nullable(),
  type_investissement: z.string().nullable(),
  type_operation: z.string().nullable(),
  classe_actif: z.string().nullable(),
  statut_interne: z.string().nullable(),
  statut_operationnel: z.array(z.string()).nullable(),
  sous_classe_actif: z.string().nullable(),
  // Keys of both summaries are not shown by the spec: the sandbox's are in the README.
  financial_summary: jsonObject,
  reporting_summary: jsonObject,
};

export const operationListItemSchema = component(
  "OperationListItem",
  z.object(operationListFields),
);

/** The detail adds the sandbox's detail-only fields (GET /operations/{operation_id}). */
export const operationSchema = component(
  "Operation",
  z.object({
    ...operationListFields,
    description: z.string().nullable(),
    operateur_id: uuid.nullable(),
    fond_id: uuid.nullable(),
    data: jsonObject,
    kpi_snapshot: jsonObject,
    /** The operation's id in the source system that synchronises it, if any (not a UUID). */
    external_id: z.string().nullable(),
  }),
);
export type Operation = z.output<typeof operationSchema>;

/** Spec part 2, follow-up note: the `note_type` pattern. */
export const NOTE_TYPE_PATTERN = /^(reporting|call|comite|risque|libre)$/;

/** Spec part 2, follow-up note (response). */
export const noteSchema = component(
  "FollowUpNote",
  z.object({
    id: uuid,
    operation_id: uuid,
    user_id: z.string(),
    author_name: z.string(),
    content: z.string(),
    note_type: z.string(),
    date: dateTime,
    text: z.string(),
    category: z.string(),
    created_at: dateTime,
    updated_at: dateTime,
    description_i18n: z.record(z.string(), z.string()).nullable(),
    source_created_at: dateTime.nullable(),
    source_updated_at: dateTime.nullable(),
    is_resolved: z.boolean(),
    resolved_by: z.string().nullable(),
    resolved_at: dateTime.nullable(),
  }),
);
export type Note = z.output<typeof noteSchema>;

export const IMPORT_STATUSES = ["queued", "running", "succeeded", "failed"] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

/** An operations import job (fields not shown by the spec: the sandbox's, see README). */
export const importJobSchema = component(
  "OperationImportJob",
  z.object({
    id: uuid,
    status: z.enum(IMPORT_STATUSES),
    /** The file or feed the rows came from, as the caller named it. */
    source_name: z.string().nullable(),
    /** upsert: create unknown external ids, update known ones; create_only: refuse known ones. */
    mode: z.enum(["upsert", "create_only"]),
    total_rows: z.int().min(0),
    processed_rows: z.int().min(0),
    /** What a succeeded import did; null until then. */
    result: z
      .object({ created: z.int().min(0), updated: z.int().min(0), unchanged: z.int().min(0) })
      .nullable(),
    /** Why a failed import applied nothing: one entry per refused row (first 50). */
    errors: z.array(
      z.object({
        row: z.int().min(0),
        external_id: z.string(),
        reason_code: z.string(),
        message: z.string(),
      }),
    ),
    created_by: z.string(),
    created_at: dateTime,
    started_at: dateTime.nullable(),
    finished_at: dateTime.nullable(),
    /** When the job will have finished, by the sandbox's clock; null once it has. */
    expected_finish_at: dateTime.nullable(),
  }),
);
export type ImportJob = z.output<typeof importJobSchema>;
