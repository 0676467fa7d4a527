import { z } from "zod";
import { CATALOGUE } from "../api/catalogue.js";
import { record } from "../api/response.js";
import { businessDate, uuid } from "../api/schemas.js";
import { invalidArguments, UserFacingError } from "../errors.js";
import { type Domain, defineTool, READ_ONLY } from "../inventory/types.js";
import { calendarItem, isProposal, presentCalendarEvent } from "../toolkit/present.js";
import { fetchDetail, listTool } from "../toolkit/read-tools.js";

/** What is due (the calendar) and what calls for attention (notifications). */
export const calendar: Domain = {
  tools: [
    listTool({
      name: "list_calendar_events",
      title: "List calendar events",
      description:
        "Calendar events (deadlines, reporting due dates, AGs, maturities) in date order, compact, filtered by dates (inclusive), type or operation. Paged.",
      family: "calendar",
      operation: "calendar_list",
      item: calendarItem,
      present: presentCalendarEvent,
      query: CATALOGUE.calendar_list.query.shape,
      // The API pages the calendar but filters nothing (spec part 4): these are served here.
      local: {
        shape: {
          from: businessDate.optional().describe("First event_date to include (YYYY-MM-DD)."),
          to: businessDate.optional().describe("Last event_date to include (YYYY-MM-DD)."),
          event_type: z
            .string()
            .min(1)
            .max(50)
            .optional()
            .describe(
              "covenant_deadline, reporting_due, ag_date, echeance, custom... (open list).",
            ),
          operation_id: uuid.optional().describe("Only events linked to this operation."),
          undecided_proposals: z
            .boolean()
            .optional()
            .describe("true: only proposals not yet accepted or rejected."),
        },
        keep({ from, to, event_type, operation_id, undecided_proposals }) {
          if (
            [from, to, event_type, operation_id].every((v) => v === undefined) &&
            !undecided_proposals
          )
            return null;
          if (from !== undefined && to !== undefined && String(from) > String(to))
            throw new UserFacingError(
              invalidArguments("list_calendar_events", [
                { field: "from", rule: "from <= to", message: `must not be after to (${to})` },
              ]),
            );
          return (raw) => {
            const e = record(raw);
            const date = String(e.event_date ?? "");
            return (
              (from === undefined || date >= String(from)) &&
              (to === undefined || date <= String(to)) &&
              (event_type === undefined || e.event_type === event_type) &&
              (operation_id === undefined ||
                String(e.operation_id ?? "").toLowerCase() ===
                  String(operation_id).toLowerCase()) &&
              (!undecided_proposals || (isProposal(e) && (e.accepted ?? null) === null))
            );
          };
        },
      },
      pageable: true,
      narrowHint: "narrow from/to or lower limit",
    }),
    defineTool({
      kind: "run",
      name: "get_unread_notification_count",
      title: "Unread notifications",
      description: "How many notifications are unread, and whether any is critical.",
      family: "calendar",
      annotations: READ_ONLY,
      operations: ["notifications_unread_count"],
      input: z.strictObject({}),
      output: z.object({ count: z.int(), has_critical: z.boolean() }),
      async run(_args, ctx) {
        const data = await fetchDetail("notifications_unread_count", {}, ctx);
        return {
          structured: {
            count: typeof data.count === "number" ? data.count : 0,
            has_critical: data.has_critical === true,
          },
        };
      },
    }),
  ],
  resources: [
    {
      name: "calendar-events",
      title: "Calendar events",
      description: "Calendar events in date order, compact.",
      family: "calendar",
      uri: "portfolio://calendar/events{?limit,offset}",
      tool: "list_calendar_events",
      mimeType: "application/json",
    },
    {
      name: "unread-notifications",
      title: "Unread notifications",
      description: "Unread notification count and whether any is critical.",
      family: "calendar",
      uri: "portfolio://notifications/unread-count",
      tool: "get_unread_notification_count",
      mimeType: "application/json",
    },
  ],
};
