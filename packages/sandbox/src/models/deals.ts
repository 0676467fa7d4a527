import { z } from "zod";
import { component, date, dateTime, decimal, uuid } from "./common.js";
import { NOTE_TYPE_PATTERN } from "./operations.js";

export const DEAL_STATUSES = [
  "sourcing",
  "analyse",
  "due_diligence",
  "comite",
  "closing",
  "abandonne",
] as const;
export type DealStatus = (typeof DEAL_STATUSES)[number];

/** Spec part 2, Deal. */
export const dealSchema = component(
  "Deal",
  z.object({
    id: uuid,
    name: z.string(),
    status: z.enum(DEAL_STATUSES),
    created_at: dateTime,
    updated_at: dateTime,
    description: z.string().nullable(),
    montant_estime: decimal.nullable(),
    classe_actif: z.string().nullable(),
    operateur_id: uuid.nullable(),
    operation_id: uuid.nullable(),
    responsable: z.string().nullable(),
    date_sourcing: date.nullable(),
    date_closing_prevue: date.nullable(),
  }),
);
export type Deal = z.output<typeof dealSchema>;

/**
 * A note on a deal of the pipeline (fields not shown by the spec: the sandbox's, modelled on
 * the follow-up note of spec part 2).
 */
export const dealNoteSchema = component(
  "DealNote",
  z.object({
    id: uuid,
    deal_id: uuid,
    user_id: z.string(),
    author_name: z.string(),
    content: z.string(),
    note_type: z.string().regex(NOTE_TYPE_PATTERN),
    /** The business date-time of the note (a call, a committee). */
    date: dateTime,
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type DealNote = z.output<typeof dealNoteSchema>;
