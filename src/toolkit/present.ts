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

export const operationItem = z.object({
  id: z.string(),
  name: Text,
  status: Text,
  phase: Text,
  spv_id: Text,
  spv_name: Text.describe(NAMED),
  classe_actif: Text,
  statut_interne: Text,
  montant_engage: Decimal.describe("From financial_summary; decimal kept as the API wrote it."),
  encours: Decimal,
  prochain_reporting: Text,
  updated_at: Text,
});

export function presentOperation(raw: unknown): z.output<typeof operationItem> {
  const o = record(raw);
  const finance = record(o.financial_summary);
  const reporting = record(o.reporting_summary);
  return {
    id: String(o.id ?? ""),
    name: text(o.name),
    status: text(o.status),
    phase: text(o.phase),
    spv_id: text(o.spv_id),
    spv_name: text(o.spv_name),
    classe_actif: text(o.classe_actif),
    statut_interne: text(o.statut_interne),
    montant_engage: decimal(finance.montant_engage),
    encours: decimal(finance.encours),
    prochain_reporting: text(reporting.prochain_reporting),
    updated_at: text(o.updated_at),
  };
}

export const dealItem = z.object({
  id: z.string(),
  name: Text,
  status: Text,
  montant_estime: Decimal,
  classe_actif: Text,
  operateur_id: Text,
  operation_id: Text,
  operation_name: Text.describe(NAMED),
  responsable: Text,
  date_sourcing: Text,
  date_closing_prevue: Text,
});

export function presentDeal(raw: unknown): z.output<typeof dealItem> {
  const d = record(raw);
  return {
    id: String(d.id ?? ""),
    name: text(d.name),
    status: text(d.status),
    montant_estime: decimal(d.montant_estime),
    classe_actif: text(d.classe_actif),
    operateur_id: text(d.operateur_id),
    operation_id: text(d.operation_id),
    operation_name: text(d.operation_name),
    responsable: text(d.responsable),
    date_sourcing: text(d.date_sourcing),
    date_closing_prevue: text(d.date_closing_prevue),
  };
}

export const operatorItem = z.object({
  id: z.string(),
  name: Text,
  siren: Text,
  type: Text,
  reputation_gouvernance_label: Text,
  litiges_en_cours: Flag,
  responsable_interne: Text,
});

export function presentOperator(raw: unknown): z.output<typeof operatorItem> {
  const o = record(raw);
  return {
    id: String(o.id ?? ""),
    name: text(o.name),
    siren: text(o.siren),
    type: text(o.type),
    reputation_gouvernance_label: text(o.reputation_gouvernance_label),
    litiges_en_cours: flag(o.litiges_en_cours),
    responsable_interne: text(o.responsable_interne),
  };
}

export const noteItem = z.object({
  id: z.string(),
  date: Text,
  note_type: Text,
  category: Text,
  author_name: Text,
  text: Text.describe("Clipped at 1,500 characters in lists."),
  is_resolved: Flag,
});

export function presentNote(raw: unknown): z.output<typeof noteItem> {
  const n = record(raw);
  return {
    id: String(n.id ?? ""),
    date: text(n.date),
    note_type: text(n.note_type),
    category: text(n.category),
    author_name: text(n.author_name),
    text: clip(n.text ?? n.content, 1_500),
    is_resolved: flag(n.is_resolved),
  };
}

export const calendarItem = z.object({
  id: z.string(),
  event_date: Text,
  event_type: Text,
  title: Text,
  operation_id: Text,
  operation_name: Text.describe(NAMED),
  spv_id: Text,
  spv_name: Text.describe(NAMED),
  source: Text,
  proposal: z
    .boolean()
    .describe("Suggested by the system (from an alert, or with a confidence index)."),
  accepted: Flag.describe("On a proposal: null until accepted or rejected."),
});

/**
 * A proposal is an event the system suggested rather than a person entered: it names the alert
 * it came from or carries a confidence index (spec part 2). Only these are accepted or rejected.
 */
export function isProposal(raw: unknown): boolean {
  const e = record(raw);
  return (e.source_alert_id ?? null) !== null || (e.confidence ?? null) !== null;
}

export function presentCalendarEvent(raw: unknown): z.output<typeof calendarItem> {
  const e = record(raw);
  return {
    id: String(e.id ?? ""),
    event_date: text(e.event_date),
    event_type: text(e.event_type),
    title: text(e.title),
    operation_id: text(e.operation_id),
    operation_name: text(e.operation_name),
    spv_id: text(e.spv_id),
    spv_name: text(e.spv_name),
    source: text(e.source),
    proposal: isProposal(e),
    accepted: flag(e.accepted),
  };
}

export const spvItem = z.object({
  id: z.string(),
  name: Text,
  legal_form: Text,
  fond_id: Text,
  status: Text,
});

export function presentSpv(raw: unknown): z.output<typeof spvItem> {
  const s = record(raw);
  return {
    id: String(s.id ?? ""),
    name: text(s.name),
    legal_form: text(s.legal_form),
    fond_id: text(s.fond_id),
    status: text(s.status),
  };
}

export const savedViewItem = z.object({
  id: z.string(),
  name: Text,
  type: Text,
  filters: z.record(z.string(), z.unknown()),
  columns: z.array(z.string()).nullable(),
  is_default: Flag,
  updated_at: Text,
});

export function presentSavedView(raw: unknown): z.output<typeof savedViewItem> {
  const v = record(raw);
  return {
    id: String(v.id ?? ""),
    name: text(v.name),
    type: text(v.type),
    filters: record(v.filters),
    columns: texts(v.columns),
    is_default: flag(v.is_default),
    updated_at: text(v.updated_at),
  };
}

export const dashboardItem = z.object({
  id: z.string(),
  name: Text,
  description: Text,
  is_shared: Flag,
  widgets: z.int().describe("Number of layout items."),
  updated_at: Text,
});

/** Never carries `share_token`: a dashboard's share link must not be published (spec part 2). */
export function presentDashboard(raw: unknown): z.output<typeof dashboardItem> {
  const d = record(raw);
  return {
    id: String(d.id ?? ""),
    name: text(d.name),
    description: clip(d.description, 300),
    is_shared: flag(d.is_shared),
    widgets: Array.isArray(d.layout) ? d.layout.length : 0,
    updated_at: text(d.updated_at),
  };
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
  operation_name: { schema: Text.describe(NAMED), read: (a) => text(a.operation_name) },
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
