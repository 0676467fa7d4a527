import { z } from "zod";
import { component, date, dateTime, pageOf, uuid } from "./common.js";

/** Timeline: shapes not shown by the spec, the sandbox's choice (README). */

export const TIMELINE_TYPES = [
  "status_change",
  "note",
  "alert",
  "calendar_event",
  "document",
  "task",
  "repayment",
] as const;
export type TimelineType = (typeof TIMELINE_TYPES)[number];

export const timelineEventSchema = component(
  "TimelineEvent",
  z.object({
    /** Stable across reads: the same fact always has the same id (deduplicate on it). */
    id: uuid,
    operation_id: uuid,
    type: z.enum(TIMELINE_TYPES),
    occurred_at: dateTime,
    title: z.string(),
    summary: z.string().nullable(),
    /** Who did it: a user id, `apikey:<key_id>`, `system`; null when nobody in particular. */
    actor: z.string().nullable(),
    severity: z.enum(["info", "warning", "critical"]).nullable(),
    /** The record the event comes from. */
    source: z.object({ type: z.string(), id: uuid }),
  }),
);
export type TimelineEvent = z.output<typeof timelineEventSchema>;

export const timelinePageSchema = component("TimelinePage", pageOf(timelineEventSchema));

export const narrativeSchema = component(
  "OperationNarrative",
  z.object({
    operation_id: uuid,
    title: z.string(),
    language: z.literal("fr"),
    /** The business date the narrative is written for. */
    as_of: date,
    /** The period whose events it recounts. */
    period_start: date,
    period_end: date,
    event_count: z.int().min(0),
    sections: z.array(
      z.object({
        key: z.enum(["situation", "faits_marquants", "points_attention", "a_venir"]),
        heading: z.string(),
        text: z.string(),
      }),
    ),
    /** The sections as one text, headings included. */
    text: z.string(),
  }),
);
export type Narrative = z.output<typeof narrativeSchema>;

/** A move of an operation's status, as the timeline recounts it. */
export interface StatusChange {
  id: string;
  operation_id: string;
  from: string | null;
  to: string;
  at: string;
  by: string;
}
