import type { FieldDefinition } from "../models/taxonomies.js";

type Def = Omit<FieldDefinition, "availability" | "enum_values"> &
  Partial<Pick<FieldDefinition, "availability" | "enum_values">>;

function def(d: Def): FieldDefinition {
  return { availability: "available", enum_values: null, ...d };
}

/**
 * Business fields found in `Operation.data` and `Operator.data`. Units are stated here and
 * never inferred from a key's name (spec part 2, conventions).
 */
export const FIELD_DEFINITIONS: FieldDefinition[] = [
  def({
    key: "surface_plancher",
    label: "Surface de plancher",
    description: "Surface de plancher totale du programme.",
    applies_to: "operation",
    type: "decimal",
    unit: "m2",
  }),
  def({
    key: "nombre_lots",
    label: "Nombre de lots",
    description: "Nombre de lots du programme.",
    applies_to: "operation",
    type: "integer",
    unit: "lots",
  }),
  def({
    key: "ville",
    label: "Ville",
    description: "Commune du programme.",
    applies_to: "operation",
    type: "string",
    unit: null,
  }),
  def({
    key: "code_postal",
    label: "Code postal",
    description: "Code postal du programme.",
    applies_to: "operation",
    type: "string",
    unit: null,
  }),
  def({
    key: "date_livraison_prevue",
    label: "Date de livraison prévue",
    description: "Date de livraison prévue au dernier reporting.",
    applies_to: "operation",
    type: "date",
    unit: null,
  }),
  def({
    key: "taux_commercialisation",
    label: "Taux de commercialisation",
    description: "Part des lots réservés ou actés.",
    applies_to: "operation",
    type: "decimal",
    unit: "%",
  }),
  def({
    key: "prix_moyen_m2",
    label: "Prix moyen de vente",
    description: "Prix moyen de vente TTC au mètre carré.",
    applies_to: "operation",
    type: "decimal",
    unit: "EUR/m2",
  }),
  def({
    key: "duree_travaux",
    label: "Durée des travaux",
    description: "Durée prévisionnelle des travaux.",
    applies_to: "operation",
    type: "integer",
    unit: "mois",
  }),
  def({
    key: "certification_environnementale",
    label: "Certification environnementale",
    description: "Label ou certification visé.",
    applies_to: "operation",
    type: "enum",
    unit: null,
    enum_values: ["nf_habitat_hqe", "breeam", "bbca", "re2020", "aucune"],
  }),
  def({
    key: "garantie_financiere_achevement",
    label: "Garantie financière d'achèvement",
    description: "GFA délivrée pour le programme.",
    applies_to: "operation",
    type: "boolean",
    unit: null,
  }),
  def({
    key: "indice_cout_construction",
    label: "Indice du coût de la construction",
    description: "Remplacé par le suivi des coûts de travaux.",
    applies_to: "operation",
    type: "decimal",
    unit: "points",
    availability: "deprecated",
  }),
  def({
    key: "chiffre_affaires",
    label: "Chiffre d'affaires",
    description: "Chiffre d'affaires du dernier exercice clos.",
    applies_to: "operateur",
    type: "decimal",
    unit: "kEUR",
  }),
  def({
    key: "effectif",
    label: "Effectif",
    description: "Nombre de salariés.",
    applies_to: "operateur",
    type: "integer",
    unit: "personnes",
  }),
  def({
    key: "annee_creation",
    label: "Année de création",
    description: "Année de création de la société.",
    applies_to: "operateur",
    type: "integer",
    unit: null,
  }),
  def({
    key: "operations_livrees",
    label: "Opérations livrées",
    description: "Nombre d'opérations livrées sur cinq ans.",
    applies_to: "operateur",
    type: "integer",
    unit: "opérations",
  }),
  def({
    key: "fonds_propres",
    label: "Fonds propres",
    description: "Fonds propres au dernier bilan.",
    applies_to: "operateur",
    type: "decimal",
    unit: "kEUR",
  }),
  def({
    key: "notation_banque_de_france",
    label: "Cotation Banque de France",
    description: "Non disponible pour cette entité.",
    applies_to: "operateur",
    type: "string",
    unit: null,
    availability: "unavailable",
  }),
];
