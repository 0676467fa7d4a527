import type { DealNote, DealStatus } from "../models/deals.js";
import type { FamilySeed } from "./index.js";

export interface DealsData {
  dealNotes: DealNote[];
}

/** What the team writes about a deal at each step of the pipeline: note type and text. */
const NOTES_BY_STATUS: Record<DealStatus, ReadonlyArray<readonly [type: string, text: string]>> = {
  sourcing: [
    [
      "call",
      "Premier échange avec l'opérateur : dossier à compléter (bilan, plan de financement, permis).",
    ],
    ["libre", "Visite du foncier prévue ; emplacement cohérent avec la stratégie du fonds."],
  ],
  analyse: [
    [
      "libre",
      "Analyse du bilan promoteur : fonds propres suffisants, pré-commercialisation à confirmer.",
    ],
    [
      "risque",
      "Point d'attention : concentration sur un seul entrepreneur général pour le gros œuvre.",
    ],
  ],
  due_diligence: [
    [
      "libre",
      "Due diligence juridique lancée : titre de propriété, autorisations d'urbanisme, purge des recours.",
    ],
    [
      "call",
      "Appel avec le notaire : promesse de vente signée, conditions suspensives en cours de levée.",
    ],
  ],
  comite: [
    ["comite", "Présentation en comité d'investissement : avis favorable sous réserve d'une GFA."],
    ["risque", "Le comité demande un stress test à -10 % sur les prix de sortie."],
  ],
  closing: [
    ["comite", "Conditions du comité levées : GFA reçue, stress test satisfaisant."],
    ["call", "Signature de la convention de prêt programmée chez le notaire."],
  ],
  abandonne: [
    ["libre", "Dossier abandonné : prix du foncier incompatible avec la rentabilité cible."],
    ["risque", "Recours des riverains non purgé à la date limite : dossier classé sans suite."],
  ],
};

const HOUR_MS = 3_600_000;
const PIPELINE: readonly DealStatus[] = [
  "sourcing",
  "analyse",
  "due_diligence",
  "comite",
  "closing",
];

/**
 * Notes on every deal of the pipeline (one to three, by the team's approved users), written
 * between the deal's sourcing and its last change: one per step the deal went through, the
 * last about where it is now.
 */
export const seedDeals: FamilySeed<DealsData> = {
  family: "deals",
  seed(data, { random }) {
    const authors = data.users.filter((u) => u.status === "approved");
    const dealNotes: DealNote[] = [];
    for (const deal of data.deals) {
      const steps: readonly DealStatus[] =
        deal.status === "abandonne"
          ? ["sourcing", "analyse", "abandonne"]
          : PIPELINE.slice(0, PIPELINE.indexOf(deal.status) + 1);
      const told = steps.slice(-random.int(1, 3));
      const from = Date.parse(deal.created_at);
      const to = Math.max(from + HOUR_MS, Date.parse(deal.updated_at));
      told.forEach((step, n) => {
        const [type, text] = random.pick(NOTES_BY_STATUS[step]);
        const author = random.pick(authors);
        const at = new Date(from + Math.floor(((to - from) * (n + 1)) / (told.length + 1)));
        dealNotes.push({
          id: random.uuid(),
          deal_id: deal.id,
          user_id: author.id,
          author_name: author.display_name,
          content: text,
          note_type: type,
          date: at.toISOString(),
          created_at: at.toISOString(),
          updated_at: at.toISOString(),
        });
      });
    }
    return { dealNotes };
  },
};
