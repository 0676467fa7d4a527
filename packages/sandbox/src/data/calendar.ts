import { contentDigest } from "../idempotency.js";
import type { CalendarEvent } from "../models/calendar.js";
import type { FamilySeed } from "./index.js";

/**
 * What a manual creation's receipt remembers for good (spec part 2,
 * ManualCreationIdempotencyReceipt): the event it created, even after the event is deleted.
 */
export interface CalendarReceiptRecord {
  actor_id: string;
  client_request_id: string;
  payload_digest: string;
  event_id: string;
  deleted: boolean;
}

export interface CalendarData {
  calendarReceipts: CalendarReceiptRecord[];
}

/** The content a manual creation is identified by: the event as created, absent read as null. */
export function creationContent(event: Pick<CalendarEvent, CreationField>) {
  return {
    title: event.title,
    description: event.description ?? null,
    event_date: event.event_date,
    event_type: event.event_type,
    operation_id: event.operation_id?.toLowerCase() ?? null,
    operateur_id: event.operateur_id?.toLowerCase() ?? null,
    fond_id: event.fond_id?.toLowerCase() ?? null,
    spv_id: event.spv_id?.toLowerCase() ?? null,
  };
}
type CreationField =
  | "title"
  | "description"
  | "event_date"
  | "event_type"
  | "operation_id"
  | "operateur_id"
  | "fond_id"
  | "spv_id";

/** sha256 (hex) of the canonical JSON of the creation content: keys sorted, no spaces. */
export function payloadDigest(event: Pick<CalendarEvent, CreationField>): string {
  return contentDigest(creationContent(event));
}

/** The receipts of the seeded manual events, their digests computed from their content. */
export const seedCalendar: FamilySeed<CalendarData> = {
  family: "calendar",
  seed(data) {
    const calendarReceipts: CalendarReceiptRecord[] = [];
    for (const event of data.calendarEvents) {
      const receipt = event.idempotency_receipt;
      if (!receipt) continue;
      receipt.payload_digest = payloadDigest(event);
      calendarReceipts.push({
        actor_id: receipt.actor_id,
        client_request_id: receipt.client_request_id,
        payload_digest: receipt.payload_digest,
        event_id: event.id,
        deleted: false,
      });
    }
    return { calendarReceipts };
  },
};
