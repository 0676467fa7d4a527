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
  }),
);
export type Operation = z.output<typeof operationSchema>;

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
