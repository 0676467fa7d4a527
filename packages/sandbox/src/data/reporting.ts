import {
  type Dataset,
  type ReportTemplate,
  type TemplateFilters,
  templateColumns,
} from "../models/reporting.js";
import { DEMO_USERS } from "./demo.js";
import type { FamilySeed } from "./index.js";

export interface ReportingData {
  reportTemplates: ReportTemplate[];
}

type Seeded = [
  name: string,
  description: string,
  dataset: Dataset,
  columns: string[],
  filters: TemplateFilters,
  sort: ReportTemplate["sort"],
  system: boolean,
];

const TEMPLATES: readonly Seeded[] = [
  [
    "Encours par opération",
    "Encours et engagements des opérations actives, le plus gros encours d'abord.",
    "operations",
    [
      "name",
      "status",
      "classe_actif",
      "fond",
      "montant_engage",
      "encours",
      "taux_annuel",
      "date_echeance",
    ],
    { status: ["active"] },
    { by: "encours", order: "desc" },
    true,
  ],
  [
    "Covenants LTV et DSCR",
    "Suivi des ratios des opérations actives, la LTV la plus haute d'abord.",
    "operations",
    ["name", "spv", "encours", "valeur_venale", "ltv", "dscr", "statut_interne"],
    { status: ["active"] },
    { by: "ltv", order: "desc" },
    true,
  ],
  [
    "Échéances à venir et impayés",
    "Lignes d'échéancier dues ou en retard, par date.",
    "repayments",
    ["operation", "due_date", "kind", "total", "paid", "remaining", "status", "days_late"],
    { status: ["due", "late"] },
    { by: "due_date", order: "asc" },
    false,
  ],
  [
    "Impayés",
    "Lignes en retard, le plus ancien retard d'abord.",
    "repayments",
    ["operation", "due_date", "remaining", "days_late"],
    { status: ["late"] },
    { by: "days_late", order: "desc" },
    false,
  ],
  [
    "Commercialisation des programmes",
    "Rythme de vente des programmes en commercialisation ou en livraison.",
    "operations",
    [
      "name",
      "ville",
      "nombre_lots",
      "taux_commercialisation",
      "date_livraison_prevue",
      "operateur",
    ],
    { status: ["commercialisation", "livraison"] },
    { by: "taux_commercialisation", order: "asc" },
    false,
  ],
];

/** Two templates the entity ships with (read-only) and three its users made. */
export const seedReporting: FamilySeed<ReportingData> = {
  family: "reporting",
  seed(_data, { random, at }) {
    return {
      reportTemplates: TEMPLATES.map(
        ([name, description, dataset, columns, filters, sort, system]): ReportTemplate => {
          const created = at(-random.int(30, 400));
          return {
            id: random.uuid(),
            name,
            description,
            dataset,
            columns: templateColumns(
              dataset,
              columns.map((key) => ({ key })),
            ),
            filters,
            sort,
            is_system: system,
            version: 1,
            created_by: system ? "system" : random.pick([DEMO_USERS.camille, DEMO_USERS.thomas]),
            created_at: created,
            updated_at: created,
          };
        },
      ),
    };
  },
};
