import { z } from "zod";
import { component, date, dateTime, pageOf, uuid } from "./common.js";

/** Reporting templates: fields not shown by the spec, the sandbox's choice (README). */

export const DATASETS = ["operations", "repayments"] as const;
export type Dataset = (typeof DATASETS)[number];

/** How a column's cells are typed: amounts and decimals as strings (spec part 2), never floats. */
export const COLUMN_TYPES = ["string", "amount", "decimal", "integer", "number", "date"] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

interface ColumnDef {
  label: string;
  type: ColumnType;
}

/** What each dataset can show: its columns, their labels and types. */
export const DATASET_COLUMNS: Record<Dataset, Record<string, ColumnDef>> = {
  operations: {
    name: { label: "Opération", type: "string" },
    status: { label: "Statut", type: "string" },
    phase: { label: "Phase", type: "string" },
    classe_actif: { label: "Classe d'actif", type: "string" },
    type_investissement: { label: "Type d'investissement", type: "string" },
    statut_interne: { label: "Statut interne", type: "string" },
    spv: { label: "SPV", type: "string" },
    fond: { label: "Fonds", type: "string" },
    operateur: { label: "Opérateur", type: "string" },
    ville: { label: "Ville", type: "string" },
    montant_engage: { label: "Montant engagé (EUR)", type: "amount" },
    montant_appele: { label: "Montant appelé (EUR)", type: "amount" },
    montant_rembourse: { label: "Montant remboursé (EUR)", type: "amount" },
    encours: { label: "Encours (EUR)", type: "amount" },
    valeur_venale: { label: "Valeur vénale (EUR)", type: "amount" },
    taux_annuel: { label: "Taux annuel (%)", type: "decimal" },
    ltv: { label: "LTV (%)", type: "decimal" },
    dscr: { label: "DSCR", type: "number" },
    taux_commercialisation: { label: "Taux de commercialisation (%)", type: "decimal" },
    nombre_lots: { label: "Nombre de lots", type: "integer" },
    date_echeance: { label: "Date d'échéance", type: "date" },
    date_livraison_prevue: { label: "Livraison prévue", type: "date" },
  },
  repayments: {
    operation: { label: "Opération", type: "string" },
    due_date: { label: "Échéance", type: "date" },
    kind: { label: "Nature", type: "string" },
    principal: { label: "Capital (EUR)", type: "amount" },
    interest: { label: "Intérêts (EUR)", type: "amount" },
    total: { label: "Total dû (EUR)", type: "amount" },
    paid: { label: "Payé (EUR)", type: "amount" },
    remaining: { label: "Reste dû (EUR)", type: "amount" },
    status: { label: "Statut", type: "string" },
    paid_on: { label: "Payée le", type: "date" },
    days_late: { label: "Jours de retard", type: "integer" },
  },
};

/** The columns of a template as published: each key with its label and type. */
export function templateColumns(
  dataset: Dataset,
  columns: ReadonlyArray<{ key: string; label?: string }>,
): Array<{ key: string; label: string; type: ColumnType }> {
  return columns.map(({ key, label }) => {
    const column = DATASET_COLUMNS[dataset][key];
    if (!column) throw new Error(`no column ${key} in ${dataset}`);
    return { key, label: label ?? column.label, type: column.type };
  });
}

export const templateFiltersSchema = z.strictObject({
  /** Operation status codes (or `active`) for operations; due, paid, late for repayments. */
  status: z.array(z.string().min(1).max(50)).min(1).max(20).optional(),
  classe_actif: z.array(z.string().min(1).max(50)).min(1).max(20).optional(),
  statut_interne: z.array(z.string().min(1).max(50)).min(1).max(20).optional(),
  fond_id: uuid.optional(),
  spv_id: uuid.optional(),
  operation_id: uuid.optional(),
  due_from: date.optional(),
  due_to: date.optional(),
});
export type TemplateFilters = z.output<typeof templateFiltersSchema>;

export const templateSortSchema = z.strictObject({
  by: z.string().min(1).max(50),
  order: z.enum(["asc", "desc"]),
});

export const reportTemplateSchema = component(
  "ReportTemplate",
  z.object({
    id: uuid,
    name: z.string(),
    description: z.string().nullable(),
    /** What one row is: an operation, or a line of a repayment schedule. */
    dataset: z.enum(DATASETS),
    columns: z.array(z.object({ key: z.string(), label: z.string(), type: z.enum(COLUMN_TYPES) })),
    filters: templateFiltersSchema,
    sort: templateSortSchema.nullable(),
    /** Templates the entity ships with: read, previewed and exported, never changed. */
    is_system: z.boolean(),
    version: z.int().min(1),
    created_by: z.string(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type ReportTemplate = z.output<typeof reportTemplateSchema>;

export const reportTemplateListSchema = component(
  "ReportTemplateList",
  pageOf(reportTemplateSchema),
);

const cell = z.union([z.string(), z.number(), z.null()]);

/** A tabular preview: the columns, the rows of this page as arrays of cells, the total rows. */
export const reportPreviewSchema = component(
  "ReportPreview",
  z.object({
    columns: z.array(z.object({ key: z.string(), label: z.string(), type: z.enum(COLUMN_TYPES) })),
    rows: z.array(z.array(cell)),
    total: z.int().min(0),
  }),
);
