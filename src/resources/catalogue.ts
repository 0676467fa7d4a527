import type { Directory } from "./directory.js";
import { matchCodes, matchNamed } from "./directory.js";
import { type CompiledTemplate, compileTemplate } from "./templates.js";

export type Completer = (directory: Directory, typed: string) => Promise<string[]>;

export interface ResourceSpec {
  name: string;
  title: string;
  description: string;
  /** A fixed URI, or a template with `{var}` segments and `{?a,b}` options. */
  uri: string;
  /** The read-only tool that produces this resource's content. */
  tool: string;
  mimeType: string;
  complete?: Record<string, Completer>;
  compiled: CompiledTemplate;
}

const JSON_TYPE = "application/json";
const byName =
  (pick: (d: Directory) => Promise<{ id: string; name: string }[]>): Completer =>
  async (d, typed) =>
    matchNamed(await pick(d), typed);
const operationStatus: Completer = async (d, typed) =>
  matchCodes(["active", ...(await d.codes("operation_status"))], typed);
const dealStatus: Completer = async (_d, typed) =>
  matchCodes(["sourcing", "analyse", "due_diligence", "comite", "closing", "abandonne"], typed);

const spec = (
  s: Omit<ResourceSpec, "compiled" | "mimeType"> & { mimeType?: string },
): ResourceSpec => ({
  mimeType: JSON_TYPE,
  ...s,
  compiled: compileTemplate(s.uri),
});

/** Every read of the catalogue as a `portfolio://` resource (or template), backed by its tool. */
export const RESOURCES: readonly ResourceSpec[] = [
  spec({
    name: "overview",
    title: "Portfolio overview",
    description: "Aggregates by status, asset class and SPV.",
    uri: "portfolio://overview",
    tool: "get_portfolio_overview",
  }),
  spec({
    name: "operations",
    title: "Operations",
    description: "Operations, compact; filter by exact name, status code (or active) and SPV.",
    uri: "portfolio://operations{?name,status,spv_id,limit,offset}",
    tool: "list_operations",
    complete: { status: operationStatus, spv_id: byName((d) => d.spvs()) },
  }),
  spec({
    name: "operation",
    title: "Operation",
    description: "One operation in full.",
    uri: "portfolio://operations/{operation_id}",
    tool: "get_operation",
    complete: { operation_id: byName((d) => d.operations()) },
  }),
  spec({
    name: "operation-notes",
    title: "Operation notes",
    description: "Follow-up notes of one operation, newest first.",
    uri: "portfolio://operations/{operation_id}/notes",
    tool: "list_operation_notes",
    complete: { operation_id: byName((d) => d.operations()) },
  }),
  spec({
    name: "deals",
    title: "Deals",
    description: "Pipeline deals, compact; filter by status.",
    uri: "portfolio://deals{?status,limit,offset}",
    tool: "list_deals",
    complete: { status: dealStatus },
  }),
  spec({
    name: "deal",
    title: "Deal",
    description: "One pipeline deal in full.",
    uri: "portfolio://deals/{deal_id}",
    tool: "get_deal",
    complete: { deal_id: byName((d) => d.deals()) },
  }),
  spec({
    name: "spvs",
    title: "SPVs",
    description: "The entity's SPVs; exact name filter.",
    uri: "portfolio://spvs{?name}",
    tool: "list_spvs",
  }),
  spec({
    name: "operators",
    title: "Operators",
    description: "Operators, compact; exact name or partial search.",
    uri: "portfolio://operators{?name,search,limit,offset}",
    tool: "find_operators",
  }),
  spec({
    name: "operator",
    title: "Operator",
    description: "One operator in full.",
    uri: "portfolio://operators/{operateur_id}",
    tool: "get_operator",
    complete: { operateur_id: byName((d) => d.operators()) },
  }),
  spec({
    name: "taxonomies",
    title: "Taxonomies",
    description: "Codes of the six taxonomy dimensions.",
    uri: "portfolio://taxonomies",
    tool: "get_taxonomies",
  }),
  spec({
    name: "field-definitions",
    title: "Field definitions",
    description: "Keys, types, units and availability of business fields.",
    uri: "portfolio://field-definitions",
    tool: "get_field_definitions",
  }),
  spec({
    name: "field-definition",
    title: "Field definition",
    description: "One business field's definition.",
    uri: "portfolio://field-definitions/{field_key}",
    tool: "get_field_definitions",
    complete: { field_key: async (d, typed) => matchCodes(await d.fieldKeys(), typed) },
  }),
  spec({
    name: "siren",
    title: "SIREN record",
    description: "Local or cached company data for a SIREN (never billable).",
    uri: "portfolio://siren/{siren}",
    tool: "lookup_siren",
  }),
  spec({
    name: "calendar-events",
    title: "Calendar events",
    description: "Calendar events in date order, compact.",
    uri: "portfolio://calendar/events{?limit,offset}",
    tool: "list_calendar_events",
  }),
  spec({
    name: "unread-notifications",
    title: "Unread notifications",
    description: "Unread notification count and whether any is critical.",
    uri: "portfolio://notifications/unread-count",
    tool: "get_unread_notification_count",
  }),
  spec({
    name: "inrev-report",
    title: "INREV report",
    description: "The INREV reporting workbook (XLSX).",
    uri: "portfolio://reports/inrev",
    tool: "export_inrev_report",
    mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  }),
  spec({
    name: "me",
    title: "My profile",
    description: "The delegated user's profile and preferences.",
    uri: "portfolio://me",
    tool: "get_my_profile",
  }),
  spec({
    name: "my-saved-views",
    title: "My saved views",
    description: "The delegated user's saved views.",
    uri: "portfolio://me/saved-views",
    tool: "list_my_saved_views",
  }),
  spec({
    name: "my-dashboards",
    title: "My dashboards",
    description: "The delegated user's custom dashboards.",
    uri: "portfolio://me/custom-dashboards",
    tool: "list_my_dashboards",
  }),
];

export const isTemplate = (r: ResourceSpec) => r.uri.includes("{");
