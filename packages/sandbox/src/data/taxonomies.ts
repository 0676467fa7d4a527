import type { TaxonomyDimension } from "../models/taxonomies.js";

/** The five canonical active statuses: `status=active` expands to these (spec part 4). */
export const ACTIVE_OPERATION_STATUSES = [
  "sourcing",
  "instruction",
  "travaux",
  "commercialisation",
  "livraison",
] as const;

export const CLOSED_OPERATION_STATUSES = ["remboursee", "cloturee", "abandonnee"] as const;

function dimension(
  name: string,
  label: string,
  values: ReadonlyArray<readonly [code: string, label: string]>,
  active: readonly string[] = [],
): TaxonomyDimension {
  return {
    dimension: name,
    label,
    values: values.map(([code, valueLabel], index) => ({
      code,
      label: valueLabel,
      order: index + 1,
      ...(active.length > 0 ? { is_active_status: active.includes(code) } : {}),
    })),
  };
}

/** The six dimensions named by the spec (part 2, conventions). Codes are the sandbox's. */
export const TAXONOMIES: TaxonomyDimension[] = [
  dimension(
    "operation_status",
    "Statut de l'opération",
    [
      ["sourcing", "Sourcing"],
      ["instruction", "En instruction"],
      ["travaux", "En travaux"],
      ["commercialisation", "En commercialisation"],
      ["livraison", "En livraison"],
      ["remboursee", "Remboursée"],
      ["cloturee", "Clôturée"],
      ["abandonnee", "Abandonnée"],
    ],
    ACTIVE_OPERATION_STATUSES,
  ),
  dimension("investment_type", "Type d'investissement", [
    ["dette_senior", "Dette senior"],
    ["dette_mezzanine", "Dette mezzanine"],
    ["obligations", "Obligations"],
    ["fonds_propres", "Fonds propres"],
    ["compte_courant", "Compte courant d'associé"],
  ]),
  dimension("operation_type", "Type d'opération", [
    ["promotion", "Promotion immobilière"],
    ["marchand_de_biens", "Marchand de biens"],
    ["rehabilitation", "Réhabilitation"],
    ["amenagement", "Aménagement foncier"],
    ["value_add", "Value-add"],
  ]),
  dimension("asset_class", "Classe d'actif", [
    ["residentiel", "Résidentiel"],
    ["bureaux", "Bureaux"],
    ["commerce", "Commerce"],
    ["logistique", "Logistique"],
    ["hotellerie", "Hôtellerie"],
    ["sante", "Santé"],
    ["mixte", "Mixte"],
  ]),
  dimension("internal_status", "Statut interne", [
    ["nominal", "Nominal"],
    ["sous_surveillance", "Sous surveillance"],
    ["alerte", "En alerte"],
    ["precontentieux", "Précontentieux"],
  ]),
  dimension("operational_status", "Statut opérationnel", [
    ["permis_obtenu", "Permis de construire obtenu"],
    ["purge_recours", "Purge des recours"],
    ["financement_obtenu", "Financement bancaire obtenu"],
    ["travaux_demarres", "Travaux démarrés"],
    ["hors_eau_hors_air", "Hors d'eau, hors d'air"],
    ["achevement", "Achèvement déclaré"],
    ["livraison_partielle", "Livraison partielle"],
  ]),
];

export function taxonomyCodes(dimensionName: string): string[] {
  const found = TAXONOMIES.find((d) => d.dimension === dimensionName);
  if (!found) throw new Error(`unknown taxonomy dimension ${dimensionName}`);
  return found.values.map((v) => v.code);
}
