import { z } from "zod";
import { CATALOGUE, type OperationId } from "../api/catalogue.js";
import { asListPage } from "../api/response.js";
import { businessDate, uuid } from "../api/schemas.js";
import { fitToBudget, listOutput } from "./budget.js";
import { invalidArguments, UserFacingError } from "./errors.js";
import { previewText, saveExport, summariseWorkbook, workbookSummary } from "./inrev.js";
import { filteredPage, folded, listPage, WALK_MAX_ITEMS, walkPages } from "./listing.js";
import {
  calendarItem,
  dashboardItem,
  dealItem,
  detail,
  noteItem,
  operationItem,
  operatorItem,
  presentCalendarEvent,
  presentDashboard,
  presentDeal,
  presentNote,
  presentOperation,
  presentOperator,
  presentSavedView,
  presentSpv,
  record,
  savedViewItem,
  spvItem,
  withoutShareTokens,
} from "./present.js";
import { defineTool, READ_ONLY, type ToolContext, type ToolDefinition } from "./types.js";

const allPages = z
  .boolean()
  .optional()
  .describe("Fetch every page (at most 2,000 items) instead of one; reports progress.");

const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    total: z.int(),
    offset: z.int(),
    next_offset: z
      .int()
      .nullable()
      .describe("Pass as offset for the next page; null on the last page."),
    note: z.string().optional(),
  });

async function fetchDetail(
  operation: OperationId,
  input: object,
  ctx: ToolContext,
): Promise<Record<string, unknown>> {
  const result = await ctx.api.call(operation, input as never, {
    signal: ctx.signal,
    delegatedUser: ctx.session.delegatedUser,
  });
  return withoutShareTokens(record(result.data));
}

/** A tool that returns one complete record as the API gives it. */
function detailTool(options: {
  name: string;
  title: string;
  description: string;
  operation: OperationId;
  input?: z.ZodObject;
  toRequest?: (args: Record<string, unknown>) => object;
}): ToolDefinition {
  return defineTool({
    name: options.name,
    title: options.title,
    description: options.description,
    annotations: READ_ONLY,
    input: options.input ?? z.strictObject({}),
    output: detail,
    run: async (args, ctx) => ({
      structured: await fetchDetail(
        options.operation,
        options.toRequest?.(args) ?? { path: args },
        ctx,
      ),
    }),
  });
}

/** A tool over a list route: one page by default, every page with `all_pages`. */
function listTool<T extends { id: string }>(options: {
  name: string;
  title: string;
  description: string;
  operation: OperationId;
  item: z.ZodType<T>;
  present: (raw: unknown) => T;
  query?: z.ZodRawShape;
  path?: z.ZodRawShape;
  /**
   * Filters the API lacks, served by walking pages here: their arguments, and the predicate
   * they make (null when none was given).
   */
  local?: {
    shape: z.ZodRawShape;
    keep(args: Record<string, unknown>): ((raw: unknown) => boolean) | null;
  };
  pageable: boolean;
  narrowHint: string;
}): ToolDefinition {
  const localNames = Object.keys(options.local?.shape ?? {});
  const input = z.strictObject({
    ...options.path,
    ...options.query,
    ...options.local?.shape,
    ...(options.pageable ? { all_pages: allPages } : {}),
  });
  return defineTool({
    name: options.name,
    title: options.title,
    description: options.description,
    annotations: READ_ONLY,
    input,
    output: listOf(options.item),
    async run(args, ctx) {
      const { all_pages, ...rest } = args as Record<string, unknown> & { all_pages?: boolean };
      const pathNames = Object.keys(options.path ?? {});
      const path = Object.fromEntries(Object.entries(rest).filter(([k]) => pathNames.includes(k)));
      const query = Object.fromEntries(
        Object.entries(rest).filter(([k]) => !pathNames.includes(k) && !localNames.includes(k)),
      );
      const call = {
        operation: options.operation,
        query,
        path: pathNames.length > 0 ? path : undefined,
        present: options.present,
        narrowHint: options.narrowHint,
        maxLimit: 200,
      };
      const keep = options.local?.keep(rest) ?? null;
      if (keep) {
        const { limit, offset, ...upstream } = query;
        const page = {
          offset: typeof offset === "number" ? offset : 0,
          limit: all_pages ? WALK_MAX_ITEMS : typeof limit === "number" ? limit : 50,
        };
        const { list, text } = await filteredPage({ ...call, query: upstream }, keep, page, ctx);
        return { structured: list, text };
      }
      const { list, text } = all_pages ? await walkPages(call, ctx) : await listPage(call, ctx);
      return { structured: list, text };
    },
  });
}

const q = CATALOGUE;
const previewBody = q.workflow_recommendations_preview.body.unwrap();

export const READ_TOOLS: readonly ToolDefinition[] = [
  detailTool({
    name: "get_portfolio_overview",
    title: "Portfolio overview",
    description:
      "Portfolio aggregates: operation counts and amounts by status, asset class and SPV, and the deal pipeline. Start here for any portfolio-wide question.",
    operation: "portfolio_get",
    toRequest: () => ({}),
  }),
  listTool({
    name: "list_operations",
    title: "List operations",
    description:
      "Operations, compact (id, name, status, phase, SPV, amounts). Filters: name_contains (part of a name, any case or accents), exact name, status (an operation_status code from get_taxonomies, or active for sourcing to livraison), spv_id. Paged: total, next_offset.",
    operation: "operations_list",
    item: operationItem,
    present: presentOperation,
    query: q.operations_list.query.shape,
    local: {
      shape: {
        name_contains: z
          .string()
          .min(2)
          .max(100)
          .optional()
          .describe(
            "Part of the name, case and accents ignored; the server searches up to 2,000 operations for it.",
          ),
      },
      keep({ name_contains }) {
        if (typeof name_contains !== "string") return null;
        const wanted = folded(name_contains.trim());
        return (raw) => folded(String(record(raw).name ?? "")).includes(wanted);
      },
    },
    pageable: true,
    narrowHint: "filter by status or spv_id, or lower limit",
  }),
  detailTool({
    name: "get_operation",
    title: "Get an operation",
    description:
      "One operation in full: financial_summary, kpi_snapshot, business data (units in get_field_definitions).",
    operation: "operation_get",
    input: q.operation_get.params,
  }),
  listTool({
    name: "list_operation_notes",
    title: "List an operation's notes",
    description:
      "Follow-up notes of one operation, newest first (text clipped at 1,500 characters). Paged.",
    operation: "operation_notes_list",
    item: noteItem,
    present: presentNote,
    path: q.operation_notes_list.params.shape,
    query: q.operation_notes_list.query.shape,
    pageable: true,
    narrowHint: "lower limit",
  }),
  listTool({
    name: "list_deals",
    title: "List deals",
    description:
      "Pre-closing pipeline deals, compact. Filter by status (sourcing, analyse, due_diligence, comite, closing, abandonne). Paged.",
    operation: "deals_list",
    item: dealItem,
    present: presentDeal,
    query: q.deals_list.query.shape,
    pageable: true,
    narrowHint: "filter by status",
  }),
  detailTool({
    name: "get_deal",
    title: "Get a deal",
    description: "One pipeline deal in full.",
    operation: "deal_get",
    input: q.deal_get.params,
  }),
  listTool({
    name: "list_spvs",
    title: "List SPVs",
    description: "The entity's SPVs (id, name, legal form, fund). Optional exact name filter.",
    operation: "spvs_list",
    item: spvItem,
    present: presentSpv,
    query: q.spvs_list.query.shape,
    pageable: false,
    narrowHint: "filter by name",
  }),
  listTool({
    name: "find_operators",
    title: "Find operators",
    description:
      "Operators (developers, asset managers...), compact. Use name for an exact match or search for part of a name, not both. Paged.",
    operation: "operators_list",
    item: operatorItem,
    present: presentOperator,
    query: q.operators_list.query.shape,
    pageable: true,
    narrowHint: "use search",
  }),
  detailTool({
    name: "get_operator",
    title: "Get an operator",
    description:
      "One operator in full: identity, SIREN, disputes, governance score, business data.",
    operation: "operator_get",
    input: q.operator_get.params,
  }),
  detailTool({
    name: "get_taxonomies",
    title: "Taxonomies",
    description:
      "Codes of the six dimensions (operation_status, investment_type, operation_type, asset_class, internal_status, operational_status). Filters take these codes, never labels.",
    operation: "taxonomies_get",
    toRequest: () => ({}),
  }),
  defineTool({
    name: "get_field_definitions",
    title: "Field definitions",
    description:
      "Keys, types, units and availability of business fields (operation and operator data). Give field_key for one.",
    annotations: READ_ONLY,
    input: z.strictObject({ field_key: q.field_definition_get.params.shape.field_key.optional() }),
    output: detail,
    run: async ({ field_key }, ctx) => ({
      structured:
        field_key === undefined
          ? await fetchDetail("field_definitions_list", {}, ctx)
          : await fetchDetail("field_definition_get", { path: { field_key } }, ctx),
    }),
  }),
  detailTool({
    name: "lookup_siren",
    title: "Look up a SIREN",
    description: "Company data for a SIREN from local data or cache only; never a billable call.",
    operation: "siren_get",
    input: q.siren_get.params,
  }),
  detailTool({
    name: "validate_siren",
    title: "Validate a SIREN",
    description: "Checks a SIREN's format and checksum locally, without any provider.",
    operation: "siren_validate",
    input: q.siren_validate.params,
  }),
  listTool({
    name: "list_calendar_events",
    title: "List calendar events",
    description:
      "Calendar events (deadlines, reporting due dates, AGs, maturities) in date order, compact. Filters: from and to (dates, inclusive), event_type, operation_id; the server searches up to 2,000 events for them. Paged.",
    operation: "calendar_list",
    item: calendarItem,
    present: presentCalendarEvent,
    query: q.calendar_list.query.shape,
    local: {
      shape: {
        from: businessDate.optional().describe("First event_date to include (YYYY-MM-DD)."),
        to: businessDate.optional().describe("Last event_date to include (YYYY-MM-DD)."),
        event_type: z
          .string()
          .min(1)
          .max(50)
          .optional()
          .describe("covenant_deadline, reporting_due, ag_date, echeance, custom... (open list)."),
        operation_id: uuid.optional().describe("Only events linked to this operation."),
      },
      keep({ from, to, event_type, operation_id }) {
        if ([from, to, event_type, operation_id].every((v) => v === undefined)) return null;
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
              String(e.operation_id ?? "").toLowerCase() === String(operation_id).toLowerCase())
          );
        };
      },
    },
    pageable: true,
    narrowHint: "lower limit",
  }),
  defineTool({
    name: "get_unread_notification_count",
    title: "Unread notifications",
    description: "How many notifications are unread, and whether any is critical.",
    annotations: READ_ONLY,
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
  defineTool({
    name: "export_inrev_report",
    title: "Export the INREV report",
    description:
      "The entity's INREV reporting workbook (XLSX), embedded, with a preview of each sheet.",
    annotations: READ_ONLY,
    input: z.strictObject({}),
    output: workbookSummary,
    async run(_args, ctx) {
      const result = await ctx.api.call("reports_inrev", {}, { signal: ctx.signal });
      const bytes = result.data as Buffer;
      const fileName = `inrev-report-${new Date().toISOString().slice(0, 10)}.xlsx`;
      const summary = await summariseWorkbook(bytes, fileName);
      const savedPath = ctx.exportDir ? await saveExport(ctx.exportDir, fileName, bytes) : null;
      return {
        structured: { ...summary, saved_path: savedPath },
        blocks: [
          {
            type: "resource",
            resource: {
              uri: "portfolio://reports/inrev",
              mimeType: summary.mime_type,
              blob: bytes.toString("base64"),
            },
          },
          { type: "text", text: previewText(summary) },
        ],
      };
    },
  }),
  defineTool({
    name: "preview_workflow_recommendations",
    title: "Preview workflow recommendations",
    description:
      "Workflow recommendations for the portfolio (a read; nothing is created). Filter by operation_ids or preset_keys; include_applied adds those already turned into workflows.",
    annotations: READ_ONLY,
    input: z.strictObject(previewBody.shape),
    output: listOf(detail),
    async run(args, ctx) {
      const body = Object.keys(args).length > 0 ? args : undefined;
      const page = asListPage(
        (await ctx.api.call("workflow_recommendations_preview", { body }, { signal: ctx.signal }))
          .data,
      );
      const items = page.items.map((raw) => withoutShareTokens(record(raw)));
      const { list, text } = fitToBudget(
        listOutput(items, page.total, 0),
        "filter by operation_ids",
      );
      return { structured: list, text };
    },
  }),
  detailTool({
    name: "get_my_profile",
    title: "My profile",
    description: "The profile and preferences of the user this server acts for.",
    operation: "me_get",
    toRequest: () => ({}),
  }),
  listTool({
    name: "list_my_saved_views",
    title: "My saved views",
    description: "The saved views of the user this server acts for (filters, columns).",
    operation: "saved_views_list",
    item: savedViewItem,
    present: presentSavedView,
    pageable: false,
    narrowHint: "none",
  }),
  listTool({
    name: "list_my_dashboards",
    title: "My dashboards",
    description: "The custom dashboards of the user this server acts for.",
    operation: "custom_dashboards_list",
    item: dashboardItem,
    present: presentDashboard,
    pageable: false,
    narrowHint: "none",
  }),
];
