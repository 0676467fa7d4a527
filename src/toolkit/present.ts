import { z } from "zod";
import { record } from "../api/response.js";
import { quote } from "../writes/display.js";

/**
 * Compact projections: the fields a person scans in a list. Upstream values are taken only
 * when they have the expected type (a missing or odd value becomes null), and decimals stay
 * exactly as the API wrote them, string or number.
 */

export { record } from "../api/response.js";

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);
const decimal = (value: unknown): string | number | null =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) ? value : null;
const flag = (value: unknown): boolean | null => (typeof value === "boolean" ? value : null);
const texts = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? (value as string[]) : null;

const Text = z.string().nullable();
const Decimal = z.union([z.string(), z.number()]).nullable();
const Flag = z.boolean().nullable();
/** The name beside an id, filled by the listing from the server's directory (toolkit/names.ts). */
const NAMED = "The name of the record the id points to; null when not known.";

/** Clips long free text in lists; the detail tools return it whole. */
function clip(value: unknown, max: number): string | null {
  const s = text(value);
  return s !== null && s.length > max ? `${s.slice(0, max)}…` : s;
}

/** A complete record whose fields the spec leaves open: its id (when it has one) and the rest as given. */
export const detail = z.looseObject({});

/**
 * How one field of a compact item is read from the record (the field of the same name, for the
 * plain kinds) and how the listing declares it: the item schema and its presenter from one list.
 */
interface Column<T> {
  schema: z.ZodType<T>;
  read(r: Record<string, unknown>): T;
}
const KINDS = {
  text: { schema: Text, read: text },
  decimal: { schema: Decimal, read: decimal },
  flag: { schema: Flag, read: flag },
};
type Kind = keyof typeof KINDS;
type ValueOf<S> =
  S extends Column<infer T> ? T : S extends Kind ? ReturnType<(typeof KINDS)[S]["read"]> : never;
export type Projected<S> = { id: string } & { [K in keyof S]: ValueOf<S[K]> };

export function projection<const S extends Record<string, Kind | Column<unknown>>>(spec: S) {
  const columns = Object.entries(spec).map(([name, c]): [string, Column<unknown>] => [
    name,
    typeof c === "string"
      ? { schema: KINDS[c].schema, read: (r) => KINDS[c].read(r[name]) }
      : (c as Column<unknown>),
  ]);
  const item = z.object({
    id: z.string(),
    ...Object.fromEntries(columns.map(([name, c]) => [name, c.schema])),
  }) as unknown as z.ZodType<Projected<S>>;
  const present = (raw: unknown): Projected<S> => {
    const r = record(raw);
    const out: Record<string, unknown> = { id: String(r.id ?? "") };
    for (const [name, c] of columns) out[name] = c.read(r);
    return out as Projected<S>;
  };
  return { item, present };
}

/** A text field clipped in lists (the API's own record has it whole). */
const clipped = (name: string, max: number, description: string): Column<string | null> => ({
  schema: Text.describe(description),
  read: (r) => clip(r[name], max),
});

/** A field read from a summary object of the record (`financial_summary.encours`). */
const inside = <T>(
  summary: string,
  name: string,
  kind: { schema: z.ZodType<T>; read(value: unknown): T },
  description?: string,
): Column<T> => ({
  schema: description ? kind.schema.describe(description) : kind.schema,
  read: (r) => kind.read(record(r[summary])[name]),
});
/** A name beside an id, filled by the listing from the server's directory (toolkit/names.ts). */
const named = (name: string): Column<string | null> => ({
  schema: Text.describe(NAMED),
  read: (r) => text(r[name]),
});

export const operationRows = projection({
  name: "text",
  status: "text",
  phase: "text",
  spv_id: "text",
  spv_name: named("spv_name"),
  classe_actif: "text",
  statut_interne: "text",
  montant_engage: inside(
    "financial_summary",
    "montant_engage",
    { schema: Decimal, read: decimal },
    "From financial_summary; decimal kept as the API wrote it.",
  ),
  encours: inside("financial_summary", "encours", { schema: Decimal, read: decimal }),
  prochain_reporting: inside("reporting_summary", "prochain_reporting", {
    schema: Text,
    read: text,
  }),
  updated_at: "text",
});

export const dealRows = projection({
  name: "text",
  status: "text",
  montant_estime: "decimal",
  classe_actif: "text",
  operateur_id: "text",
  operation_id: "text",
  operation_name: named("operation_name"),
  responsable: "text",
  date_sourcing: "text",
  date_closing_prevue: "text",
});

export const operatorRows = projection({
  name: "text",
  siren: "text",
  type: "text",
  reputation_gouvernance_label: "text",
  litiges_en_cours: "flag",
  responsable_interne: "text",
});

export const noteRows = projection({
  date: "text",
  note_type: "text",
  category: "text",
  author_name: "text",
  text: {
    schema: Text.describe("Clipped at 1,500 characters in lists."),
    read: (n) => clip(n.text ?? n.content, 1_500),
  },
  is_resolved: "flag",
});

/**
 * A proposal is an event the system suggested rather than a person entered: it names the alert
 * it came from or carries a confidence index (spec part 2). Only these are accepted or rejected.
 */
export function isProposal(raw: unknown): boolean {
  const e = record(raw);
  return (e.source_alert_id ?? null) !== null || (e.confidence ?? null) !== null;
}

export const calendarRows = projection({
  event_date: "text",
  event_type: "text",
  title: "text",
  operation_id: "text",
  operation_name: named("operation_name"),
  spv_id: "text",
  spv_name: named("spv_name"),
  source: "text",
  proposal: {
    schema: z
      .boolean()
      .describe("Suggested by the system (from an alert, or with a confidence index)."),
    read: (e) => isProposal(e),
  },
  accepted: {
    schema: Flag.describe("On a proposal: null until accepted or rejected."),
    read: (e) => flag(e.accepted),
  },
});

export const spvRows = projection({
  name: "text",
  legal_form: "text",
  fond_id: "text",
  status: "text",
});

export const savedViewRows = projection({
  name: "text",
  type: "text",
  filters: { schema: z.record(z.string(), z.unknown()), read: (v) => record(v.filters) },
  columns: { schema: z.array(z.string()).nullable(), read: (v) => texts(v.columns) },
  is_default: "flag",
  updated_at: "text",
});

/** Never carries `share_token`: a dashboard's share link must not be published (spec part 2). */
export const dashboardRows = projection({
  name: "text",
  description: { schema: Text, read: (d) => clip(d.description, 300) },
  is_shared: "flag",
  widgets: {
    schema: z.int().describe("Number of layout items."),
    read: (d) => (Array.isArray(d.layout) ? d.layout.length : 0),
  },
  updated_at: "text",
});

const metric = z
  .object({ name: Text, value: Decimal, threshold: Decimal, unit: Text })
  .nullable()
  .describe("Measured value against its threshold, decimals as the API wrote them.");

export const alerts = projection({
  title: "text",
  alert_type: "text",
  severity: "text",
  status: "text",
  operation_id: "text",
  operation_name: named("operation_name"),
  metric: {
    schema: metric,
    read: (a) => {
      if (a.metric === null || typeof a.metric !== "object") return null;
      const m = record(a.metric);
      return {
        name: text(m.name),
        value: decimal(m.value),
        threshold: decimal(m.threshold),
        unit: text(m.unit),
      };
    },
  },
  description: clipped("description", 300, "Clipped at 300 characters."),
  due_date: "text",
  postponed_until: "text",
  detected_at: "text",
});

export const timelineEvents = projection({
  occurred_at: "text",
  type: "text",
  title: "text",
  summary: clipped("summary", 300, "Clipped at 300 characters."),
  actor: "text",
  severity: "text",
  source_type: { schema: Text, read: (e) => text(record(e.source).type) },
  source_id: {
    schema: Text.describe("The record behind the event (an alert's id for type alert...)."),
    read: (e) => text(record(e.source).id),
  },
});

const size = z.int().nullable().describe("In bytes.");

export const searchHits = projection({
  type: "text",
  title: "text",
  code: "text",
  matched_on: "text",
  snippet: clipped("snippet", 300, "Clipped at 300 characters."),
  score: {
    schema: z.number().nullable(),
    read: (h) => (typeof h.score === "number" && Number.isFinite(h.score) ? h.score : null),
  },
  // A document's, for the person to tell one file from another; null for other records.
  document_date: {
    schema: Text.describe("A document's date; null for other records."),
    read: (h) => text(h.document_date),
  },
  content_type: "text",
  size_bytes: {
    schema: size,
    read: (h) => (Number.isSafeInteger(h.size_bytes) ? (h.size_bytes as number) : null),
  },
});

/** A measure against its threshold, for a preview: decimals as the API wrote them, quoted. */
export function metricAgainstThreshold(value: unknown): string[] {
  if (!value || typeof value !== "object") return [];
  const m = record(value);
  const unit = typeof m.unit === "string" ? ` ${quote(m.unit, 20)}` : "";
  return [
    `${quote(String(m.name ?? "metric"), 60)} ${quote(String(m.value), 40)}${unit} against threshold ${quote(String(m.threshold), 40)}${unit}`,
  ];
}
