import { z } from "zod";
import { CATALOGUE } from "../api/catalogue.js";
import { asListPage, record } from "../api/response.js";
import { businessDate, uuid } from "../api/schemas.js";
import { invalidArguments, UserFacingError } from "../errors.js";
import { type Domain, defineTool, READ_ONLY, type ToolContext } from "../toolkit/definitions.js";
import { calendarRows, detail, isProposal } from "../toolkit/present.js";
import { fetchDetail, listTool } from "../toolkit/read-tools.js";

/** Unread notifications listed, newest first: the contract's own list, when this key has it. */
const UNREAD_SHOWN = 20;
async function unreadNotifications(
  ctx: ToolContext,
): Promise<{ unread: Record<string, unknown>[] } | { note: string }> {
  const op = ctx.offer.offered.get("notifications_list");
  if (!op)
    return {
      note: "The unread notifications cannot be listed: this key is not offered notifications_list.",
    };
  const result = await ctx.api.send(
    op,
    { query: { unread_only: "true", limit: UNREAD_SHOWN } },
    { signal: ctx.signal, delegatedUser: ctx.session.delegatedUser },
  );
  return { unread: asListPage(result.data).items.map(record) };
}

/** What is due (the calendar) and what calls for attention (notifications). */
export const calendar: Domain = {
  tools: [
    listTool({
      name: "list_calendar_events",
      title: "List calendar events",
      description:
        "Calendar events (deadlines, reporting dates, AGs, maturities, proposals) in date order, compact, filtered by dates, type or operation. Paged.",
      family: "calendar",
      operation: "calendar_list",
      item: calendarRows.item,
      present: calendarRows.present,
      query: CATALOGUE.calendar_list.query.shape,
      // The API pages the calendar but filters nothing (spec part 4): these are served here.
      local: {
        shape: {
          from: businessDate.optional().describe("First event_date included."),
          to: businessDate.optional().describe("Last event_date included."),
          event_type: z
            .string()
            .min(1)
            .max(50)
            .optional()
            .describe("covenant_deadline, reporting_due, ag_date, echeance..."),
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
      input: z.strictObject({
        list: z.boolean().optional().describe(`true: also the unread ones, newest first.`),
      }),
      output: z.object({
        count: z.int(),
        has_critical: z.boolean(),
        unread: z.array(detail).optional(),
        note: z.string().optional(),
      }),
      async run({ list }, ctx) {
        const data = await fetchDetail("notifications_unread_count", {}, ctx);
        const counted = {
          count: typeof data.count === "number" ? data.count : 0,
          has_critical: data.has_critical === true,
        };
        if (!list) return { structured: counted };
        return { structured: { ...counted, ...(await unreadNotifications(ctx)) } };
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
