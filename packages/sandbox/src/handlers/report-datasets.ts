import { ACTIVE_OPERATION_STATUSES, taxonomyCodes } from "../data/taxonomies.js";
import { LINE_STATUSES } from "../models/repayments.js";
import {
  DATASET_COLUMNS,
  type Dataset,
  type ReportTemplate,
  type TemplateFilters,
} from "../models/reporting.js";
import { type FieldError, invalid } from "../problem.js";
import type { SandboxState } from "../state.js";
import { scheduleView } from "./repayments.js";

/**
 * The rows of the reporting templates: one per operation, or per line of a repayment schedule,
 * with every column of the dataset (models/reporting.ts); the filters each dataset takes.
 */

export type Cell = string | number | null;
type Row = Record<string, Cell>;

/** The filters each dataset understands, and the codes its list filters accept. */
const FILTERS: Record<
  Dataset,
  Partial<Record<keyof TemplateFilters, () => readonly string[] | null>>
> = {
  operations: {
    status: () => ["active", ...taxonomyCodes("operation_status")],
    classe_actif: () => taxonomyCodes("asset_class"),
    statut_interne: () => taxonomyCodes("internal_status"),
    fond_id: () => null,
    spv_id: () => null,
  },
  repayments: {
    status: () => LINE_STATUSES,
    operation_id: () => null,
    fond_id: () => null,
    due_from: () => null,
    due_to: () => null,
  },
};

/** 422 naming each column, filter or sort key the dataset does not have. */
export function checkDefinition(
  dataset: Dataset,
  parts: {
    columns?: ReadonlyArray<{ key: string }>;
    filters?: TemplateFilters;
    sort?: { by: string } | null;
  },
): void {
  const columns = DATASET_COLUMNS[dataset];
  const errors: FieldError[] = [];
  const known = Object.keys(columns);
  parts.columns?.forEach((c, i) => {
    if (!columns[c.key])
      errors.push({
        field: `columns[${i}].key`,
        rule: `one of ${known.join(", ")}`,
        message: `${c.key} is not a column of ${dataset}`,
      });
  });
  const keys = (parts.columns ?? []).map((c) => c.key);
  if (new Set(keys).size !== keys.length)
    errors.push({ field: "columns", rule: "unique keys", message: "must not repeat a column" });
  for (const [name, value] of Object.entries(parts.filters ?? {})) {
    const codes = FILTERS[dataset][name as keyof TemplateFilters];
    if (!codes) {
      errors.push({
        field: `filters.${name}`,
        rule: `one of ${Object.keys(FILTERS[dataset]).join(", ")}`,
        message: `does not apply to ${dataset}`,
      });
      continue;
    }
    const allowed = codes();
    if (allowed && Array.isArray(value)) {
      value.forEach((v, i) => {
        if (!allowed.includes(v))
          errors.push({
            field: `filters.${name}[${i}]`,
            rule: `one of ${allowed.join(", ")}`,
            message: `${v} is not a code of ${name}`,
          });
      });
    }
  }
  if (parts.sort && !columns[parts.sort.by])
    errors.push({
      field: "sort.by",
      rule: `one of ${known.join(", ")}`,
      message: `${parts.sort.by} is not a column of ${dataset}`,
    });
  if (errors.length > 0) throw invalid(errors, "invalid_template");
}

/** The rows a template selects, filtered and sorted, each with every column of its dataset. */
export function templateRows(
  state: SandboxState,
  template: Pick<ReportTemplate, "dataset" | "filters" | "sort">,
  today: string,
): Row[] {
  const rows =
    template.dataset === "operations"
      ? operationRows(state, template.filters)
      : lineRows(state, template.filters, today);
  const sort = template.sort;
  if (!sort) return rows;
  const sign = sort.order === "asc" ? 1 : -1;
  const numeric =
    DATASET_COLUMNS[template.dataset][sort.by]?.type !== "string" &&
    DATASET_COLUMNS[template.dataset][sort.by]?.type !== "date";
  return [...rows].sort((a, b) => {
    const x = a[sort.by] ?? null;
    const y = b[sort.by] ?? null;
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1; // empty cells last
    const order = numeric ? Number(x) - Number(y) : String(x).localeCompare(String(y), "fr");
    return sign * order;
  });
}

function operationRows(state: SandboxState, f: TemplateFilters): Row[] {
  const { operations, spvs, funds, operators } = state.data;
  const statuses = f.status?.flatMap((s) =>
    s === "active" ? [...ACTIVE_OPERATION_STATUSES] : [s],
  );
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  return operations
    .filter(
      (o) =>
        (statuses === undefined || statuses.includes(o.status)) &&
        (f.classe_actif === undefined || f.classe_actif.includes(o.classe_actif ?? "")) &&
        (f.statut_interne === undefined || f.statut_interne.includes(o.statut_interne ?? "")) &&
        (f.fond_id === undefined || o.fond_id === f.fond_id.toLowerCase()) &&
        (f.spv_id === undefined || o.spv_id === f.spv_id.toLowerCase()),
    )
    .map((o) => ({
      name: o.name,
      status: o.status,
      phase: o.phase,
      classe_actif: o.classe_actif,
      type_investissement: o.type_investissement,
      statut_interne: o.statut_interne,
      spv: spvs.find((s) => s.id === o.spv_id)?.name ?? null,
      fond: funds.find((x) => x.id === o.fond_id)?.name ?? null,
      operateur: operators.find((x) => x.id === o.operateur_id)?.name ?? null,
      ville: text(o.data.ville),
      montant_engage: text(o.financial_summary.montant_engage),
      montant_appele: text(o.financial_summary.montant_appele),
      montant_rembourse: text(o.financial_summary.montant_rembourse),
      encours: text(o.financial_summary.encours),
      valeur_venale: text(o.kpi_snapshot.valeur_venale),
      taux_annuel: text(o.financial_summary.taux_annuel),
      ltv: text(o.kpi_snapshot.ltv),
      dscr: typeof o.kpi_snapshot.dscr === "number" ? o.kpi_snapshot.dscr : null,
      taux_commercialisation: text(o.data.taux_commercialisation),
      nombre_lots: typeof o.data.nombre_lots === "number" ? o.data.nombre_lots : null,
      date_echeance: text(o.financial_summary.date_echeance),
      date_livraison_prevue: text(o.data.date_livraison_prevue),
    }));
}

function lineRows(state: SandboxState, f: TemplateFilters, today: string): Row[] {
  const rows: Row[] = [];
  for (const schedule of state.data.repaymentSchedules) {
    const operation = state.data.operations.find((o) => o.id === schedule.operation_id);
    if (!operation) continue;
    if (f.operation_id !== undefined && operation.id !== f.operation_id.toLowerCase()) continue;
    if (f.fond_id !== undefined && operation.fond_id !== f.fond_id.toLowerCase()) continue;
    for (const line of scheduleView(state, operation.id, today).lines) {
      if (f.status !== undefined && !f.status.includes(line.status)) continue;
      if (f.due_from !== undefined && line.due_date < f.due_from) continue;
      if (f.due_to !== undefined && line.due_date > f.due_to) continue;
      rows.push({
        operation: operation.name,
        due_date: line.due_date,
        kind: line.kind,
        principal: line.principal,
        interest: line.interest,
        total: line.total,
        paid: line.paid,
        remaining: line.remaining,
        status: line.status,
        paid_on: line.paid_on,
        days_late: line.days_late,
      });
    }
  }
  return rows.sort((a, b) => String(a.due_date).localeCompare(String(b.due_date)));
}
