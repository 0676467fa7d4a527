import { z } from "zod";
import { component, date, dateTime, pageOf, uuid } from "./common.js";

/** Spec part 2, ManualCreationIdempotencyReceipt. */
export const receiptSchema = component(
  "ManualCreationIdempotencyReceipt",
  z.object({
    client_request_id: z.string(),
    actor_id: z.string(),
    capability: z.string(),
    payload_digest: z.string().regex(/^[0-9a-f]{64}$/),
    replayed: z.boolean().default(false),
  }),
);
export type IdempotencyReceipt = z.output<typeof receiptSchema>;

/** Spec part 2, CalendarEventResponse, with the spec's required flags. */
export const calendarEventSchema = component(
  "CalendarEventResponse",
  z.object({
    id: uuid,
    entity_id: uuid,
    title: z.string().max(300),
    description: z.string().nullable().optional(),
    event_date: date,
    event_type: z.string().max(50),
    operation_id: uuid.nullable().optional(),
    operateur_id: uuid.nullable().optional(),
    fond_id: uuid.nullable().optional(),
    spv_id: uuid.nullable().optional(),
    source: z.string(),
    source_alert_id: uuid.nullable().optional(),
    confidence: z.number().nullable().optional(),
    accepted: z.boolean().nullable().optional(),
    idempotency_receipt: receiptSchema.nullable().optional(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type CalendarEvent = z.output<typeof calendarEventSchema>;

export const calendarEventListSchema = component(
  "CalendarEventListResponse",
  pageOf(calendarEventSchema),
);
