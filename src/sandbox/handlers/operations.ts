import { randomUUID } from "node:crypto";
import { z } from "zod";
import { ACTIVE_OPERATION_STATUSES } from "../data/taxonomies.js";
import { serviceAccount } from "../keys.js";
import { component, pageOf } from "../models/common.js";
import {
  type Note,
  noteSchema,
  type Operation,
  operationListItemSchema,
  operationSchema,
} from "../models/operations.js";
import { invalid } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import { uuid } from "../validation.js";
import { nameFilter, page, pageQuery, sameName } from "./pagination.js";

const operationParams = z.strictObject({ operation_id: uuid });

/** The list item of spec part 2: detail-only fields (data, kpi_snapshot, ...) stay out. */
export function operationListItem(o: Operation) {
  const {
    description: _d,
    operateur_id: _o,
    fond_id: _f,
    data: _data,
    kpi_snapshot: _k,
    ...item
  } = o;
  return item;
}

export const operationRoutes = [
  defineRoute({
    id: "operations_list",
    family: "operations",
    method: "GET",
    path: "/operations",
    scope: "operations:read",
    kind: "read",
    summary: "List operations",
    description:
      "`status=active` stands for sourcing, instruction, travaux, commercialisation, livraison.",
    response: { status: 200, schema: component("OperationList", pageOf(operationListItemSchema)) },
    query: z.strictObject({
      name: nameFilter.optional(),
      status: z.string().max(180).optional(),
      spv_id: uuid.optional(),
      ...pageQuery(200, 50),
    }),
    handle({ query, state }) {
      const codes =
        state.data.taxonomies
          .find((d) => d.dimension === "operation_status")
          ?.values.map((v) => v.code) ?? [];
      let statuses: readonly string[] | null = null;
      if (query.status !== undefined) {
        if (query.status === "active") statuses = ACTIVE_OPERATION_STATUSES;
        else if (codes.includes(query.status)) statuses = [query.status];
        else {
          throw invalid([
            {
              field: "status",
              rule: `one of active, ${codes.join(", ")}`,
              message: `must be an operation_status taxonomy code or active, got ${JSON.stringify(query.status)}`,
            },
          ]);
        }
      }
      const items = state.data.operations
        .filter(
          (o) =>
            (query.name === undefined || sameName(o.name, query.name)) &&
            (statuses === null || statuses.includes(o.status)) &&
            (query.spv_id === undefined || o.spv_id?.toLowerCase() === query.spv_id.toLowerCase()),
        )
        .sort((a, b) => a.name.localeCompare(b.name, "fr"))
        .map(operationListItem);
      return json(page(items, query));
    },
  }),
  defineRoute({
    id: "operation_get",
    family: "operations",
    method: "GET",
    path: "/operations/{operation_id}",
    scope: "operations:read",
    kind: "read",
    summary: "Get an operation with its KPI snapshot",
    response: { status: 200, schema: operationSchema },
    refusals: { 404: ["operation_not_found"] },
    params: operationParams,
    handle: ({ params, state }) => json(state.operation(params.operation_id)),
  }),
  defineRoute({
    id: "operation_notes_list",
    family: "operations",
    method: "GET",
    path: "/operations/{operation_id}/notes",
    scope: "operations:read",
    kind: "read",
    summary: "List an operation's follow-up notes",
    response: { status: 200, schema: component("FollowUpNoteList", pageOf(noteSchema)) },
    refusals: { 404: ["operation_not_found"] },
    params: operationParams,
    query: z.strictObject(pageQuery(200, 20)),
    handle({ params, query, state }) {
      const operation = state.operation(params.operation_id);
      const notes = state.data.notes
        .filter((n) => n.operation_id === operation.id)
        .sort((a, b) => b.date.localeCompare(a.date) || b.created_at.localeCompare(a.created_at));
      return json(page(notes, query));
    },
  }),
  defineRoute({
    id: "operation_note_create",
    family: "operations",
    method: "POST",
    path: "/operations/{operation_id}/notes",
    scope: "operations:write",
    kind: "write",
    summary: "Create a follow-up note",
    description: "`content` or `text` is required; each defaults to the other.",
    response: { status: 201, schema: noteSchema },
    refusals: { 404: ["operation_not_found"] },
    example: () => ({ body: { content: "Point d'étape avec l'opérateur", note_type: "call" } }),
    params: operationParams,
    // Spec part 2, follow-up note: every property optional and nullable.
    body: z.strictObject({
      content: z.string().min(1).max(10_000).nullish(),
      text: z.string().min(1).max(10_000).nullish(),
      note_type: z
        .string()
        .regex(
          /^(reporting|call|comite|risque|libre)$/,
          "must be one of reporting, call, comite, risque, libre",
        )
        .nullish(),
      date: z.iso
        .datetime({ offset: true, error: "must be an ISO 8601 date-time with a time zone" })
        .nullish(),
      category: z.string().min(1).max(80).nullish(),
    }),
    handle({ params, body, state, key, now }) {
      const operation = state.operation(params.operation_id);
      const content = body.content ?? body.text;
      if (!content) {
        throw invalid([
          {
            field: "content",
            rule: "content or text required",
            message: "a note needs content or text",
          },
        ]);
      }
      const createdAt = new Date(now()).toISOString();
      const note: Note = {
        id: randomUUID(),
        operation_id: operation.id,
        // Notes created through the API are authored by the key's service account.
        user_id: serviceAccount(key),
        author_name: key.label,
        content,
        note_type: body.note_type ?? "libre",
        date: body.date ?? createdAt,
        text: body.text ?? content,
        category: body.category ?? "suivi",
        created_at: createdAt,
        updated_at: createdAt,
        description_i18n: null,
        source_created_at: null,
        source_updated_at: null,
        is_resolved: false,
        resolved_by: null,
        resolved_at: null,
      };
      state.data.notes.push(note);
      return json(note, 201);
    },
  }),
];
