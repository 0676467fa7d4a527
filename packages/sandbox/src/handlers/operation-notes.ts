import { randomUUID } from "node:crypto";
import { z } from "zod";
import { serviceAccount } from "../keys.js";
import { component, dateTime, pageOf } from "../models/common.js";
import { NOTE_TYPE_PATTERN, type Note, noteSchema } from "../models/operations.js";
import { type FieldError, invalid, notFound, Problem } from "../problem.js";
import { defineRoute, type ExampleContext, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { uuid } from "../validation.js";
import { isoAt, requireChanges, sentFields } from "./mutations.js";
import { page, pageQuery } from "./pagination.js";

type NoteState = "open" | "resolved";
type NoteMove = "resolve" | "reopen";

/** Spec part 3 names `is_resolved` true and false; the moves are the sandbox's. */
export const NOTE_MOVES: Transitions<NoteState, NoteMove> = {
  resolve: ["open"],
  reopen: ["resolved"],
};

const operationParams = z.strictObject({ operation_id: uuid });
const noteParams = z.strictObject({ operation_id: uuid, note_id: uuid });

/** Spec part 2, follow-up note (request): the limits of each field. */
const noteFields = {
  content: z.string().min(1).max(10_000),
  text: z.string().min(1).max(10_000),
  note_type: z
    .string()
    .regex(NOTE_TYPE_PATTERN, "must be one of reporting, call, comite, risque, libre"),
  date: z.iso.datetime({ offset: true, error: "must be an ISO 8601 date-time with a time zone" }),
  category: z.string().min(1).max(80),
};

/** `fr`, `en`, `fr-fr`: a language, optionally a region, lower case (spec part 2). */
const LOCALE = /^[a-z]{2}(-[a-z]{2})?$/;

const noteUpdateBody = z
  .strictObject({
    ...noteFields,
    description_i18n: z.record(z.string().min(2).max(10), z.string().min(1).max(10_000)).nullable(),
    source_created_at: dateTime.nullable(),
    source_updated_at: dateTime.nullable(),
  })
  .partial();

function findNote(state: SandboxState, operationId: string, noteId: string): Note {
  const operation = state.operation(operationId);
  const note = state.data.notes.find(
    (n) => n.id === noteId.toLowerCase() && n.operation_id === operation.id,
  );
  if (!note) throw notFound("note on this operation", noteId, "note_not_found");
  return note;
}

/** Locale keys normalised (`fr_FR` → `fr-fr`); two keys for one locale, or a bad one, are 422. */
function normaliseLocales(texts: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  const errors: FieldError[] = [];
  for (const [raw, text] of Object.entries(texts)) {
    const locale = raw.trim().toLowerCase().replace("_", "-");
    const field = `description_i18n.${raw}`;
    if (!LOCALE.test(locale))
      errors.push({ field, rule: "locale", message: "must be a locale such as fr, en or fr-fr" });
    else if (locale in out)
      errors.push({ field, rule: "one text per locale", message: `repeats locale ${locale}` });
    else out[locale] = text;
  }
  if (errors.length > 0) throw invalid(errors);
  return out;
}

/**
 * Spec part 2: a note already versioned (it has a `source_updated_at`) takes a new one only if
 * strictly more recent; the same instant changes nothing. 409 `source_update_not_newer`.
 */
function checkSourceVersion(note: Note, sent: string | null | undefined): void {
  const stored = note.source_updated_at;
  if (sent === undefined || stored === null) return;
  if (sent !== null && Date.parse(sent) > Date.parse(stored)) return;
  if (sent !== null && Date.parse(sent) === Date.parse(stored)) return;
  throw new Problem(
    409,
    `Note ${note.id} is versioned at ${stored}: source_updated_at must be strictly more recent${sent === null ? ", never removed" : ""}.`,
    { reasonCode: "source_update_not_newer" },
  );
}

/** For the contract test: a note with the given resolution state, and its operation. */
function noteIn(resolved: boolean) {
  return ({ state }: ExampleContext) => {
    const note = state.data.notes.find((n) => n.is_resolved === resolved);
    return note ? { params: { operation_id: note.operation_id, note_id: note.id } } : {};
  };
}

export const operationNoteRoutes = [
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
      content: noteFields.content.nullish(),
      text: noteFields.text.nullish(),
      note_type: noteFields.note_type.nullish(),
      date: noteFields.date.nullish(),
      category: noteFields.category.nullish(),
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
  defineRoute({
    id: "operation_note_update",
    family: "operations",
    method: "PATCH",
    path: "/operations/{operation_id}/notes/{note_id}",
    scope: "operations:write",
    kind: "write",
    summary: "Change a follow-up note",
    description:
      "Absent fields are left as they are; `description_i18n`, `source_created_at` and `source_updated_at` can be cleared with null, the others cannot. On a note already versioned (`source_updated_at` set), a new `source_updated_at` must be strictly more recent (409 `source_update_not_newer`).",
    params: noteParams,
    body: noteUpdateBody,
    response: { status: 200, schema: noteSchema },
    refusals: { 404: ["operation_not_found", "note_not_found"], 409: ["source_update_not_newer"] },
    example: (ctx) => ({ ...noteIn(false)(ctx), body: { category: "suivi" } }),
    handle({ params, body, state, now }) {
      const note = findNote(state, params.operation_id, params.note_id);
      requireChanges(body);
      checkSourceVersion(note, body.source_updated_at);
      const sent = sentFields(body);
      if (sent.source_updated_at && note.source_updated_at) {
        // The same instant written another way is no change.
        if (Date.parse(sent.source_updated_at) === Date.parse(note.source_updated_at))
          delete sent.source_updated_at;
      }
      if (sent.description_i18n) sent.description_i18n = normaliseLocales(sent.description_i18n);
      Object.assign(note, sent, { updated_at: isoAt(now()) });
      return json(note);
    },
  }),
  defineRoute({
    id: "operation_note_resolve",
    family: "operations",
    method: "POST",
    path: "/operations/{operation_id}/notes/{note_id}/resolve",
    scope: "operations:write",
    kind: "write",
    summary: "Resolve a follow-up note, or reopen it",
    description:
      "Resolves an open note (`is_resolved` true, the default): `resolved_by` (a user id of the entity) defaults to the key's service account, `resolved_at` to now and cannot be in the future. `is_resolved: false` reopens a resolved note and clears both. A resolved note cannot be resolved again, nor an open one reopened (409 `invalid_transition`).",
    params: noteParams,
    body: z
      .strictObject({
        is_resolved: z.boolean().default(true),
        resolved_by: z.string().min(1).max(100).optional(),
        resolved_at: dateTime.optional(),
      })
      .optional(),
    response: { status: 200, schema: noteSchema },
    refusals: {
      404: ["operation_not_found", "note_not_found"],
      409: ["invalid_transition"],
      422: ["reference_not_found"],
    },
    example: noteIn(false),
    handle({ params, body, state, key, now }) {
      const note = findNote(state, params.operation_id, params.note_id);
      const resolve = body?.is_resolved ?? true;
      const from: NoteState = note.is_resolved ? "resolved" : "open";
      assertTransition(NOTE_MOVES, resolve ? "resolve" : "reopen", from, `Note ${note.id}`);
      const at = isoAt(now());
      if (!resolve) {
        const stray = (["resolved_by", "resolved_at"] as const).filter(
          (f) => body?.[f] !== undefined,
        );
        if (stray.length > 0)
          throw invalid(
            stray.map((field) => ({
              field,
              rule: "only when resolving",
              message: "is only sent to resolve a note",
            })),
          );
        Object.assign(note, {
          is_resolved: false,
          resolved_by: null,
          resolved_at: null,
          updated_at: at,
        });
        return json(note);
      }
      const by = body?.resolved_by;
      if (by !== undefined && !state.data.users.some((u) => u.id === by))
        throw invalid(
          [
            {
              field: "resolved_by",
              rule: "existing user",
              message: "names no user of this entity",
            },
          ],
          "reference_not_found",
        );
      const when = body?.resolved_at;
      if (
        when !== undefined &&
        (Date.parse(when) > now() || Date.parse(when) < Date.parse(note.created_at))
      )
        throw invalid([
          {
            field: "resolved_at",
            rule: `between ${note.created_at} and now`,
            message: "cannot be in the future nor before the note was written",
          },
        ]);
      Object.assign(note, {
        is_resolved: true,
        resolved_by: by ?? serviceAccount(key),
        resolved_at: when ?? at,
        updated_at: at,
      });
      return json(note);
    },
  }),
];
