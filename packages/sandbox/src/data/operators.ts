import type { Operator, RiskLevel, RiskStatus, ThirdPartyRisk } from "../models/operators.js";
import { checkSiren } from "../siren.js";
import type { FamilySeed, SeedContext } from "./index.js";

export interface OperatorsData {
  operatorRisks: ThirdPartyRisk[];
}

type Draft = Pick<ThirdPartyRisk, "category" | "level" | "status" | "title" | "description"> & {
  mitigation: string | null;
};

/** Risks the team may have found on any operator, whatever its record says. */
const SCREENING: readonly Draft[] = [
  {
    category: "financier",
    level: "eleve",
    status: "maitrise",
    title: "Fonds propres limités au regard des engagements en cours",
    description: "Trois programmes lancés en parallèle pour des fonds propres de moins de 5 M€.",
    mitigation: "Caution personnelle du dirigeant et nantissement des parts de la SCCV obtenus.",
  },
  {
    category: "sanctions",
    level: "faible",
    status: "clos",
    title: "Criblage sanctions et personnes politiquement exposées",
    description: "Criblage annuel des dirigeants et bénéficiaires effectifs.",
    mitigation: "Aucune correspondance sur les listes UE, ONU et OFAC.",
  },
  {
    category: "execution",
    level: "modere",
    status: "en_traitement",
    title: "Dépendance à un seul entrepreneur pour le gros œuvre",
    description: "Le même entrepreneur réalise le gros œuvre de tous les chantiers en cours.",
    mitigation: "Demande d'une attestation de solvabilité et d'un second devis.",
  },
  {
    category: "conformite",
    level: "modere",
    status: "identifie",
    title: "Dossier KYC à mettre à jour",
    description: "Extrait Kbis et liste des bénéficiaires effectifs de plus d'un an.",
    mitigation: null,
  },
];

/**
 * Third-party risks that follow from the operators' records (ongoing litigation, a reputation
 * to watch, a SIREN whose check digit fails) and from the team's screening, so that every
 * level and every status of the risk lifecycle is seeded.
 */
export const seedOperators: FamilySeed<OperatorsData> = {
  family: "operators",
  seed(data, context) {
    const { random } = context;
    const operatorRisks: ThirdPartyRisk[] = [];
    const add = (operator: Operator, draft: Draft) =>
      operatorRisks.push(buildRisk(operator, draft, data.users, context));
    for (const operator of data.operators) {
      if (operator.litiges_en_cours) {
        add(operator, {
          category: "juridique",
          level: "eleve",
          status: "en_traitement",
          title: "Contentieux en cours",
          description: operator.litiges_detail,
          mitigation: "Suivi trimestriel avec le conseil de l'opérateur ; provision vérifiée.",
        });
      }
      if (operator.reputation_gouvernance_label === "À surveiller") {
        add(operator, {
          category: "reputation",
          level: random.pick(["modere", "eleve"] as const),
          status: "identifie",
          title: "Réputation et gouvernance à surveiller",
          description: `Score de ${operator.reputation_gouvernance_score} sur 100 à la dernière revue.`,
          mitigation: null,
        });
      }
      if (operator.siren && !checkSiren(operator.siren).valid) {
        add(operator, {
          category: "conformite",
          level: "critique",
          status: "identifie",
          title: "SIREN invalide : identité de la contrepartie à confirmer",
          description: `La clé de contrôle du SIREN ${operator.siren} est fausse.`,
          mitigation: null,
        });
      }
      if (random.chance(0.5)) add(operator, random.pick(SCREENING));
    }
    return { operatorRisks };
  },
};

function buildRisk(
  operator: Operator,
  draft: Draft,
  users: readonly { id: string; status: string }[],
  { random, at, day }: SeedContext,
): ThirdPartyRisk {
  const identified = -random.int(20, 400);
  const created = at(identified, random.int(0, 480));
  const closed = draft.status === "clos";
  const updated =
    closed || draft.status !== "identifie" ? at(identified + random.int(5, 19)) : created;
  const reviewers = users.filter((u) => u.status === "approved").map((u) => u.id);
  return {
    id: random.uuid(),
    operateur_id: operator.id,
    ...draft,
    owner: operator.responsable_interne,
    review_date: closed ? null : day(random.int(-15, 90)),
    identified_at: day(identified),
    closed_at: closed ? updated : null,
    created_by: random.pick(reviewers),
    created_at: created,
    updated_at: updated,
  };
}

/** How much a level weighs, most severe first (lists, the RCCI summary). */
export const RISK_RANK: Record<RiskLevel, number> = { critique: 0, eleve: 1, modere: 2, faible: 3 };
export const OPEN_RISK_STATUSES: readonly RiskStatus[] = ["identifie", "en_traitement", "maitrise"];
