import { randomUUID } from "node:crypto";
import { z } from "zod";
import { serviceAccount } from "../keys.js";
import { component, date, dateTime, decimal, pageOf } from "../models/common.js";
import {
  DEAL_STATUSES,
  type Deal,
  type DealNote,
  type DealStatus,
  dealNoteSchema,
  dealSchema,
} from "../models/deals.js";
import { NOTE_TYPE_PATTERN } from "../models/operations.js";
import { invalid, notFound } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { uuid } from "../validation.js";
import { checkCodes } from "./business-data.js";
import { checkLinks, lowerId } from "./links.js";
import { isoAt, requireChanges, sentFields } from "./mutations.js";
import { page, pageQuery } from "./pagination.js";

/**
 * The pipeline (spec part 3 names the statuses, not the moves; the table is the sandbox's):
 * one step forward or back at a time, abandonment from any live step, nothing out of
 * `abandonne`. Each move is named after the status it leads to.
 */
export const DEAL_MOVES: Transitions<DealStatus, DealStatus> = {
  sourcing: ["analyse"],
  analyse: ["sourcing", "due_diligence"],
  due_diligence: ["analyse", "comite"],
  comite: ["due_diligence", "closing"],
  closing: ["comite"],
  abandonne: ["sourcing", "analyse", "due_diligence", "comite", "closing"],
};

/** Where a deal may enter the pipeline. */
const ENTRY_STATUSES = ["sourcing", "analyse"] as const;

const dealParams = z.strictObject({ deal_id: uuid });
const noteParams = z.strictObject({ deal_id: uuid, note_id: uuid });

const dealFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(5000).nullish(),
  montant_estime: decimal.refine((v) => !v.startsWith("-"), "must not be negative").nullish(),
  classe_actif: z.string().min(1).max(50).nullish(),
  operateur_id: uuid.nullish(),
  operation_id: uuid.nullish(),
  responsable: z.string().trim().min(1).max(200).nullish(),
  date_sourcing: date.nullish(),
  date_closing_prevue: date.nullish(),
};

const createBody = z.strictObject({
  ...dealFields,
  status: z.enum(ENTRY_STATUSES).optional(),
});
// Absent leaves a field as it is; null clears a nullable one (spec part 2, conventions).
const updateBody = z.strictObject({ ...dealFields, status: z.enum(DEAL_STATUSES) }).partial();

const noteFields = {
  content: z.string().min(1).max(10_000),
  note_type: z
    .string()
    .regex(NOTE_TYPE_PATTERN, "must be one of reporting, call, comite, risque, libre"),
  date: dateTime,
};

function findDeal(state: SandboxState, id: string): Deal {
  const deal = state.data.deals.find((d) => d.id === id.toLowerCase());
  if (!deal) throw notFound("deal", id, "deal_not_found");
  return deal;
}

function findNote(state: SandboxState, deal: Deal, id: string): DealNote {
  const note = state.data.dealNotes.find((n) => n.id === id.toLowerCase() && n.deal_id === deal.id);
  if (!note) throw notFound("note on this deal", id, "deal_note_not_found");
  return note;
}

/** The rules a deal's fields follow beyond their types, checked on the deal as it would be. */
function checkDeal(state: SandboxState, deal: Deal, sent: Partial<Record<string, unknown>>): void {
  checkLinks(state, sent);
  checkCodes(state, [
    { field: "classe_actif", dimension: "asset_class", value: deal.classe_actif },
  ]);
  if (
    deal.date_sourcing &&
    deal.date_closing_prevue &&
    deal.date_closing_prevue < deal.date_sourcing
  ) {
    throw invalid([
      {
        field: "date_closing_prevue",
        rule: `on or after date_sourcing (${deal.date_sourcing})`,
        message: "a deal cannot close before it was sourced",
      },
    ]);
  }
}

/** For the contract test: the first deal that has notes, and its first note. */
function dealNoteExample({ state }: { state: SandboxState }) {
  const note = state.data.dealNotes[0];
  return note ? { params: { deal_id: note.deal_id, note_id: note.id } } : {};
}

export const dealRoutes = [
  defineRoute({
    id: "deals_list",
    family: "deals",
    method: "GET",
    path: "/deals",
    scope: "deals:read",
    kind: "read",
    summary: "List deals of the pipeline",
    response: { status: 200, schema: component("DealList", pageOf(dealSchema)) },
    query: z.strictObject({ status: z.enum(DEAL_STATUSES).optional(), ...pageQuery(200, 50) }),
    handle({ query, state }) {
      const deals = state.data.deals
        .filter((d) => query.status === undefined || d.status === query.status)
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
      return json(page(deals, query));
    },
  }),
  defineRoute({
    id: "deal_create",
    family: "deals",
    method: "POST",
    path: "/deals",
    scope: "deals:write",
    kind: "write",
    summary: "Add a deal to the pipeline",
    description:
      "A deal enters the pipeline at `sourcing` (default) or `analyse`. `date_sourcing` defaults to today; links must name records of the entity; `classe_actif` is an `asset_class` code.",
    body: createBody,
    response: { status: 201, schema: dealSchema },
    refusals: { 422: ["reference_not_found", "unknown_taxonomy_code"] },
    handle({ body, state, now }) {
      const at = isoAt(now());
      const deal: Deal = {
        id: randomUUID(),
        name: body.name,
        status: body.status ?? "sourcing",
        created_at: at,
        updated_at: at,
        description: body.description ?? null,
        montant_estime: body.montant_estime ?? null,
        classe_actif: body.classe_actif ?? null,
        operateur_id: lowerId(body.operateur_id) ?? null,
        operation_id: lowerId(body.operation_id) ?? null,
        responsable: body.responsable ?? null,
        date_sourcing: body.date_sourcing === undefined ? at.slice(0, 10) : body.date_sourcing,
        date_closing_prevue: body.date_closing_prevue ?? null,
      };
      checkDeal(state, deal, body);
      state.data.deals.push(deal);
      return json(deal, 201);
    },
  }),
  defineRoute({
    id: "deal_get",
    family: "deals",
    method: "GET",
    path: "/deals/{deal_id}",
    scope: "deals:read",
    kind: "read",
    summary: "Get a deal",
    response: { status: 200, schema: dealSchema },
    refusals: { 404: ["deal_not_found"] },
    params: dealParams,
    handle: ({ params, state }) => json(findDeal(state, params.deal_id)),
  }),
  defineRoute({
    id: "deal_update",
    family: "deals",
    method: "PATCH",
    path: "/deals/{deal_id}",
    scope: "deals:write",
    kind: "write",
    summary: "Change a deal, or move it along the pipeline",
    description:
      "Absent fields are left as they are; null clears a nullable one. A `status` change follows the pipeline: one step forward or back, `abandonne` from any step, nothing out of `abandonne` (409 `invalid_transition`).",
    params: dealParams,
    body: updateBody,
    response: { status: 200, schema: dealSchema },
    refusals: {
      404: ["deal_not_found"],
      409: ["invalid_transition"],
      422: ["reference_not_found", "unknown_taxonomy_code"],
    },
    example: () => ({ body: { responsable: "Camille Martin" } }),
    handle({ params, body, state, now }) {
      const deal = findDeal(state, params.deal_id);
      requireChanges(body);
      const sent = sentFields(body);
      if (sent.status !== undefined && sent.status !== deal.status)
        assertTransition(DEAL_MOVES, sent.status, deal.status, `Deal ${deal.id}`);
      const next: Deal = { ...deal, ...sent };
      next.operateur_id = lowerId(next.operateur_id);
      next.operation_id = lowerId(next.operation_id);
      checkDeal(state, next, sent);
      Object.assign(deal, next, { updated_at: isoAt(now()) });
      return json(deal);
    },
  }),
  defineRoute({
    id: "deal_notes_list",
    family: "deals",
    method: "GET",
    path: "/deals/{deal_id}/notes",
    scope: "deals:read",
    kind: "read",
    summary: "List a deal's notes, newest first",
    params: dealParams,
    query: z.strictObject(pageQuery(200, 20)),
    response: { status: 200, schema: component("DealNoteList", pageOf(dealNoteSchema)) },
    refusals: { 404: ["deal_not_found"] },
    handle({ params, query, state }) {
      const deal = findDeal(state, params.deal_id);
      const notes = state.data.dealNotes
        .filter((n) => n.deal_id === deal.id)
        .sort((a, b) => b.date.localeCompare(a.date) || a.id.localeCompare(b.id));
      return json(page(notes, query));
    },
  }),
  defineRoute({
    id: "deal_note_create",
    family: "deals",
    method: "POST",
    path: "/deals/{deal_id}/notes",
    scope: "deals:write",
    kind: "write",
    summary: "Add a note to a deal",
    description:
      "`note_type` defaults to `libre`, `date` to now. Authored by the key's service account.",
    params: dealParams,
    body: z.strictObject({
      content: noteFields.content,
      note_type: noteFields.note_type.optional(),
      date: noteFields.date.optional(),
    }),
    response: { status: 201, schema: dealNoteSchema },
    refusals: { 404: ["deal_not_found"] },
    handle({ params, body, state, key, now }) {
      const deal = findDeal(state, params.deal_id);
      const at = isoAt(now());
      const note: DealNote = {
        id: randomUUID(),
        deal_id: deal.id,
        user_id: serviceAccount(key),
        author_name: key.label,
        content: body.content,
        note_type: body.note_type ?? "libre",
        date: body.date ?? at,
        created_at: at,
        updated_at: at,
      };
      state.data.dealNotes.push(note);
      return json(note, 201);
    },
  }),
  defineRoute({
    id: "deal_note_update",
    family: "deals",
    method: "PATCH",
    path: "/deals/{deal_id}/notes/{note_id}",
    scope: "deals:write",
    kind: "write",
    summary: "Change a note of a deal",
    description: "Absent fields are left as they are; none of them can be cleared.",
    params: noteParams,
    body: z.strictObject(noteFields).partial(),
    response: { status: 200, schema: dealNoteSchema },
    refusals: { 404: ["deal_not_found", "deal_note_not_found"] },
    example: (ctx) => ({ ...dealNoteExample(ctx), body: { note_type: "comite" } }),
    handle({ params, body, state, now }) {
      const note = findNote(state, findDeal(state, params.deal_id), params.note_id);
      requireChanges(body);
      Object.assign(note, sentFields(body), { updated_at: isoAt(now()) });
      return json(note);
    },
  }),
];
