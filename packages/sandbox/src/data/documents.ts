import { frenchDate, frenchDecimal, frenchEuros } from "../french.js";
import { DEMO_KEYS, serviceAccount } from "../keys.js";
import {
  type Attachment,
  type AttachmentTarget,
  type Dataroom,
  type DocumentCategory,
  type DocumentFile,
  type FileStatus,
  PDF_MIME,
  type StoredDocument,
  XLSX_MIME,
} from "../models/documents.js";
import type { Operation } from "../models/operations.js";
import type { Operator } from "../models/operators.js";
import type { Fund, Spv } from "../models/structures.js";
import { DEMO_USERS, type DemoData } from "./demo.js";
import type { FamilySeed, SeedContext } from "./index.js";
import { TAXONOMIES } from "./taxonomies.js";

export interface DocumentsData {
  datarooms: Dataroom[];
  documents: StoredDocument[];
}

const STATUS_LABELS = new Map(
  TAXONOMIES.find((d) => d.dimension === "operation_status")?.values.map((v) => [
    v.code,
    v.label,
  ]) ?? [],
);
const CERTIFICATIONS: Record<string, string> = {
  nf_habitat_hqe: "NF Habitat HQE",
  breeam: "BREEAM",
  bbca: "BBCA",
  re2020: "RE2020",
  aucune: "Aucune",
};
const UPLOADERS = [DEMO_USERS.camille, DEMO_USERS.thomas, DEMO_USERS.julien];

interface Draft {
  name: string;
  category: DocumentCategory;
  description?: string | null;
  documentDate: string | null;
  file: DocumentFile;
  fileStatus?: FileStatus;
  targets: Array<{ type: AttachmentTarget; id: string; name: string }>;
  dataroom?: Dataroom;
}

/**
 * Documents attached to the named operations, operators, funds and SPVs, their text written
 * from the same data (a quarterly report states the operation's own sales rate, so search and
 * AI extraction find what the operation says): reports and loan agreements on live operations,
 * valuations, sales grids as workbooks, operators' accounts and Kbis, fund reports, SPV
 * articles; a few files archived or never received, two scans without a text layer, and three
 * datarooms with their own members.
 */
export const seedDocuments: FamilySeed<DocumentsData> = {
  family: "documents",
  seed(data, context) {
    const { random } = context;
    const operators = new Map(data.operators.map((o) => [o.id, o]));
    const spvs = new Map(data.spvs.map((s) => [s.id, s]));
    const funds = new Map(data.funds.map((f) => [f.id, f]));
    const live = data.operations.filter((o) => o.status !== "sourcing" && o.phase !== "terminee");
    const drafts: Draft[] = [];
    const targetsOf = (o: Operation) => {
      const spv = o.spv_id ? spvs.get(o.spv_id) : undefined;
      return [
        { type: "operation" as const, id: o.id, name: o.name },
        ...(spv ? [{ type: "spv" as const, id: spv.id, name: spv.name }] : []),
      ];
    };

    for (const o of live) {
      const operator = o.operateur_id ? operators.get(o.operateur_id) : undefined;
      const reported = o.reporting_summary.dernier_reporting;
      if (typeof reported === "string") {
        drafts.push({
          name: `Reporting trimestriel ${quarter(reported)} – ${o.name}`,
          category: "reporting",
          description: "Reporting remis par l'opérateur.",
          documentDate: reported,
          file: pdf(`Reporting trimestriel ${quarter(reported)}`, reportingLines(o, operator)),
          targets: [{ type: "operation", id: o.id, name: o.name }],
        });
      }
      const invested = o.financial_summary.date_investissement;
      if (typeof invested === "string") {
        drafts.push({
          name: `Contrat de prêt – ${o.name}`,
          category: "contrat",
          description: null,
          documentDate: addDays(invested, -random.int(3, 20)),
          file: pdf("Contrat de prêt", loanLines(o, spvs.get(o.spv_id ?? ""), funds)),
          targets: targetsOf(o),
        });
      }
      if (o.status === "commercialisation" || o.status === "livraison") {
        drafts.push({
          name: `Grille de commercialisation – ${o.name}`,
          category: "commercialisation",
          description: "État des réservations lot par lot.",
          documentDate: typeof reported === "string" ? reported : null,
          file: salesGrid(o, random),
          targets: [{ type: "operation", id: o.id, name: o.name }],
        });
      }
      if (random.chance(0.35) && typeof o.kpi_snapshot.as_of === "string") {
        drafts.push({
          name: `Rapport d'expertise – ${o.name}`,
          category: "technique",
          description: "Expertise immobilière indépendante.",
          documentDate: o.kpi_snapshot.as_of,
          file: pdf("Rapport d'expertise", valuationLines(o)),
          targets: [{ type: "operation", id: o.id, name: o.name }],
        });
      }
    }

    // Files not available: one archived contract, two insurance certificates never received.
    const closed = data.operations.filter((o) => o.phase === "terminee");
    for (const o of closed.slice(0, 3)) {
      drafts.push({
        name: `Acte de prêt signé – ${o.name}`,
        category: "contrat",
        description: "Archivé hors ligne à la clôture de l'opération.",
        documentDate:
          typeof o.financial_summary.date_investissement === "string"
            ? o.financial_summary.date_investissement
            : null,
        file: { kind: "none" },
        fileStatus: "archived",
        targets: targetsOf(o),
      });
    }
    for (const o of live.filter((x) => x.status === "travaux").slice(0, 2)) {
      drafts.push({
        name: `Attestation d'assurance dommages-ouvrage – ${o.name}`,
        category: "juridique",
        description: "Pièce demandée à l'opérateur, non reçue.",
        documentDate: null,
        file: { kind: "none" },
        fileStatus: "missing",
        targets: [{ type: "operation", id: o.id, name: o.name }],
      });
    }

    for (const operator of data.operators.slice(0, 12)) {
      drafts.push({
        name: `Comptes annuels 2025 – ${operator.name}`,
        category: "financier",
        description: null,
        documentDate: context.day(-random.int(60, 200)),
        file: pdf("Comptes annuels 2025", accountsLines(operator)),
        targets: [{ type: "operateur", id: operator.id, name: operator.name ?? "" }],
      });
      drafts.push({
        name: `Extrait Kbis – ${operator.name}`,
        category: "kyc",
        description: null,
        documentDate: context.day(-random.int(20, 300)),
        file: pdf("Extrait Kbis", kbisLines(operator)),
        targets: [{ type: "operateur", id: operator.id, name: operator.name ?? "" }],
      });
    }
    for (const fund of data.funds) {
      drafts.push({
        name: `Rapport annuel 2025 – ${fund.name}`,
        category: "reporting",
        description: "Rapport annuel aux porteurs de parts.",
        documentDate: context.day(-random.int(40, 120)),
        file: pdf("Rapport annuel 2025", fundLines(fund, data)),
        targets: [{ type: "fond", id: fund.id, name: fund.name }],
      });
    }
    data.spvs.forEach((spv, i) => {
      const fund = funds.get(spv.fond_id);
      drafts.push({
        name: `Statuts – ${spv.name}`,
        category: "juridique",
        description: null,
        documentDate: spv.created_at.slice(0, 10),
        file: pdf("Statuts", spvLines(spv, fund)),
        targets: [{ type: "spv", id: spv.id, name: spv.name }],
      });
      if (i < 2) {
        drafts.push({
          name: `Procès-verbal d'assemblée générale 2025 – ${spv.name}`,
          category: "juridique",
          description: "Version scannée, signée.",
          documentDate: context.day(-random.int(150, 250)),
          file: pdf(`Procès-verbal d'assemblée générale – ${spv.name}`, []),
          targets: [{ type: "spv", id: spv.id, name: spv.name }],
        });
      }
    });

    const datarooms = seedDatarooms(data, context, drafts, live, spvs);
    const documents = drafts.map((draft, i) => buildDocument(draft, i, context));
    return { datarooms, documents };
  },
};

/**
 * Three datarooms: a refinancing every demo key with documents:read may open, a sale only the
 * full key may open, a pre-litigation file no key may open (members: users only).
 */
function seedDatarooms(
  data: DemoData,
  { random, day }: SeedContext,
  drafts: Draft[],
  live: Operation[],
  spvs: Map<string, Spv>,
): Dataroom[] {
  const watched = live.find((o) => o.statut_interne === "sous_surveillance") ?? live[0]!;
  const troubled =
    live.find((o) => o.statut_interne === "precontentieux" && o.id !== watched.id) ??
    live.find((o) => o.statut_interne === "alerte" && o.id !== watched.id) ??
    live[1]!;
  const sold = data.spvs.find((s) => s.status === "active" && s.id !== watched.spv_id)!;
  const refinancing: Dataroom = {
    id: random.uuid(),
    name: `Data room – Refinancement ${watched.name}`,
    operation_id: watched.id,
    members: [
      DEMO_USERS.camille,
      DEMO_USERS.julien,
      DEMO_USERS.thomas,
      serviceAccount(DEMO_KEYS.full),
      serviceAccount(DEMO_KEYS.portfolioManager),
      serviceAccount(DEMO_KEYS.readOnly),
    ],
  };
  const sale: Dataroom = {
    id: random.uuid(),
    name: `Data room – Cession ${sold.name}`,
    operation_id: null,
    members: [DEMO_USERS.camille, serviceAccount(DEMO_KEYS.full)],
  };
  const litigation: Dataroom = {
    id: random.uuid(),
    name: `Data room – Précontentieux ${troubled.name}`,
    operation_id: troubled.id,
    members: [DEMO_USERS.thomas, DEMO_USERS.camille],
  };
  const watchedTargets = [{ type: "operation" as const, id: watched.id, name: watched.name }];
  const spv = spvs.get(sold.id)!;
  drafts.push(
    {
      name: `Business plan actualisé – ${watched.name}`,
      category: "financier",
      description: "Plan de trésorerie révisé pour le refinancement.",
      documentDate: day(-random.int(130, 160)),
      file: businessPlan(watched),
      targets: watchedTargets,
      dataroom: refinancing,
    },
    {
      name: `Note de crédit – Refinancement ${watched.name}`,
      category: "comite",
      description: "Note présentée au comité d'investissement.",
      documentDate: day(-random.int(120, 129)),
      file: pdf("Note de crédit – Refinancement", creditNoteLines(watched)),
      targets: watchedTargets,
      dataroom: refinancing,
    },
    {
      name: `Protocole de cession – ${spv.name}`,
      category: "juridique",
      description: "Projet de protocole, confidentiel.",
      documentDate: day(-random.int(130, 170)),
      file: pdf("Protocole de cession", [
        `Cédant : ${spv.name}`,
        "Objet : cession de l'intégralité des parts sociales.",
        `Prix de cession : ${frenchEuros(String(random.int(300, 900) * 10_000))}`,
        "Condition suspensive : obtention de l'accord du comité d'investissement.",
      ]),
      targets: [{ type: "spv", id: spv.id, name: spv.name }],
      dataroom: sale,
    },
    {
      name: `Mise en demeure – ${troubled.name}`,
      category: "juridique",
      description: "Courrier recommandé adressé à l'opérateur.",
      documentDate: day(-random.int(121, 140)),
      file: pdf("Mise en demeure", [
        `Opération : ${troubled.name}`,
        "Objet : retard de paiement des intérêts et non-respect du covenant de LTV.",
        "Délai de régularisation : 30 jours à compter de la réception.",
      ]),
      targets: [{ type: "operation", id: troubled.id, name: troubled.name }],
      dataroom: litigation,
    },
  );
  return [refinancing, sale, litigation];
}

function buildDocument(
  draft: Draft,
  index: number,
  { random, at, past }: SeedContext,
): StoredDocument {
  const id = random.uuid();
  // Filed a few days after its date, during office hours; a recent one no later than now.
  const created = draft.documentDate
    ? past(
        `${addDays(draft.documentDate, random.int(1, 4))}T${String(random.int(8, 18)).padStart(2, "0")}:${String(random.int(0, 59)).padStart(2, "0")}:00.000Z`,
      )
    : at(-random.int(10, 40), random.int(0, 600));
  const by = random.pick(UPLOADERS);
  const fileStatus = draft.fileStatus ?? "available";
  const attachments: Attachment[] = draft.targets.map((target) => ({
    id: random.uuid(),
    target_type: target.type,
    target_id: target.id,
    target_name: target.name,
    attached_at: created,
    attached_by: by,
  }));
  return {
    id,
    code: `DOC-${String(index + 1).padStart(5, "0")}`,
    name: draft.name,
    category: draft.category,
    description: draft.description ?? null,
    document_date: draft.documentDate,
    filename: filenameFor(draft),
    content_type: draft.file.kind === "xlsx" ? XLSX_MIME : PDF_MIME,
    // Sized when first shown: rendering every file at each sandbox start would cost more
    // than all the other data (handlers/documents.ts renders and keeps the size).
    size_bytes: null,
    page_count: null,
    file_status: fileStatus,
    dataroom: draft.dataroom ? { id: draft.dataroom.id, name: draft.dataroom.name } : null,
    attachments,
    text_indexed: fileStatus === "available" && indexedText(draft.file) !== "",
    uploaded_by: by,
    created_at: created,
    updated_at: created,
    file: draft.file,
    text: fileStatus === "available" ? indexedText(draft.file) : "",
  };
}

/** The text an indexer finds in a file: a PDF's lines, a workbook's cells row by row. */
export function indexedText(file: DocumentFile): string {
  if (file.kind === "pdf")
    return file.lines.length === 0 ? "" : [file.title, ...file.lines].join("\n");
  if (file.kind === "xlsx") return file.rows.map((row) => row.join(" ; ")).join("\n");
  return "";
}

function filenameFor(draft: Draft): string {
  const base = draft.name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .toLowerCase()
    .slice(0, 80);
  return `${base}.${draft.file.kind === "xlsx" ? "xlsx" : "pdf"}`;
}

const pdf = (title: string, lines: string[]): DocumentFile => ({ kind: "pdf", title, lines });

function reportingLines(o: Operation, operator: Operator | undefined): string[] {
  const d = o.data;
  const lines = [
    `Opération : ${o.name}`,
    `Opérateur : ${operator?.name ?? "non renseigné"}`,
    `Statut : ${STATUS_LABELS.get(o.status) ?? o.status}`,
  ];
  if (typeof d.ville === "string") lines.push(`Ville : ${d.ville}`);
  if (typeof d.code_postal === "string") lines.push(`Code postal : ${d.code_postal}`);
  if (typeof d.nombre_lots === "number") lines.push(`Nombre de lots : ${d.nombre_lots}`);
  if (typeof d.surface_plancher === "string")
    lines.push(`Surface de plancher : ${frenchDecimal(d.surface_plancher, 1)} m2`);
  if (typeof d.taux_commercialisation === "string")
    lines.push(`Taux de commercialisation : ${frenchDecimal(d.taux_commercialisation, 1)} %`);
  if (typeof d.prix_moyen_m2 === "string")
    lines.push(`Prix moyen de vente : ${frenchDecimal(d.prix_moyen_m2)} EUR/m2`);
  if (typeof d.date_livraison_prevue === "string")
    lines.push(`Date de livraison prévue : ${frenchDate(d.date_livraison_prevue)}`);
  if (typeof d.duree_travaux === "number")
    lines.push(`Durée des travaux : ${d.duree_travaux} mois`);
  if (typeof d.certification_environnementale === "string")
    lines.push(
      `Certification environnementale : ${CERTIFICATIONS[d.certification_environnementale] ?? d.certification_environnementale}`,
    );
  if (typeof d.garantie_financiere_achevement === "boolean")
    lines.push(
      `Garantie financière d'achèvement : ${d.garantie_financiere_achevement ? "Oui" : "Non"}`,
    );
  if (typeof o.financial_summary.encours === "string")
    lines.push(`Encours : ${frenchEuros(o.financial_summary.encours)}`);
  if (typeof o.kpi_snapshot.ltv === "string")
    lines.push(`LTV : ${frenchDecimal(o.kpi_snapshot.ltv)} %`);
  lines.push(
    o.statut_interne === "nominal"
      ? "Commentaire : avancement conforme au planning, aucun point d'attention."
      : "Commentaire : points de vigilance sur le planning et le budget travaux, suivi renforcé demandé.",
  );
  return lines;
}

function loanLines(o: Operation, spv: Spv | undefined, funds: Map<string, Fund>): string[] {
  const f = o.financial_summary;
  const fund = spv ? funds.get(spv.fond_id) : undefined;
  return [
    `Opération : ${o.name}`,
    `Prêteur : ${fund?.name ?? "Aurore Capital Partners"}`,
    `Emprunteur : ${spv?.name ?? "société de projet en cours de constitution"}`,
    `Montant engagé : ${frenchEuros(String(f.montant_engage))}`,
    `Taux annuel : ${frenchDecimal(String(f.taux_annuel))} %`,
    `Durée : ${f.duree_mois} mois`,
    typeof f.date_echeance === "string" ? `Date d'échéance : ${frenchDate(f.date_echeance)}` : "",
    "Remboursement : in fine, intérêts payables trimestriellement.",
    "Garanties : hypothèque conventionnelle de premier rang, nantissement des parts de la SPV.",
    "Covenant : LTV maximale de 55,00 %.",
  ].filter((line) => line !== "");
}

function valuationLines(o: Operation): string[] {
  return [
    `Opération : ${o.name}`,
    `Valeur vénale : ${frenchEuros(String(o.kpi_snapshot.valeur_venale))}`,
    `Date de valeur : ${frenchDate(String(o.kpi_snapshot.as_of))}`,
    `Surface de plancher : ${frenchDecimal(String(o.data.surface_plancher), 1)} m2`,
    "Méthode : comparaison et capitalisation du revenu.",
  ];
}

function creditNoteLines(o: Operation): string[] {
  return [
    `Opération : ${o.name}`,
    `Encours : ${frenchEuros(String(o.financial_summary.encours))}`,
    `LTV : ${frenchDecimal(String(o.kpi_snapshot.ltv))} %`,
    "Proposition : prorogation de douze mois assortie d'un amortissement partiel.",
    "Avis du contrôle des risques : favorable sous réserve d'une caution de la maison mère.",
  ];
}

function accountsLines(operator: Operator): string[] {
  const d = operator.data;
  return [
    `Société : ${operator.name}`,
    `SIREN : ${operator.siren}`,
    `Chiffre d'affaires : ${frenchDecimal(String(d.chiffre_affaires))} kEUR`,
    `Fonds propres : ${frenchDecimal(String(d.fonds_propres))} kEUR`,
    `Effectif : ${d.effectif} personnes`,
    `Année de création : ${d.annee_creation}`,
    `Opérations livrées : ${d.operations_livrees}`,
  ];
}

function kbisLines(operator: Operator): string[] {
  return [
    `Dénomination : ${operator.name}`,
    `SIREN : ${operator.siren}`,
    `Forme : ${operator.forme_societe_mere ?? "SAS"}`,
    "Greffe : tribunal de commerce",
    "Activité : promotion immobilière, marchand de biens.",
  ];
}

function fundLines(fund: Fund, data: DemoData): string[] {
  const spvCount = data.spvs.filter((s) => s.fond_id === fund.id).length;
  return [
    `Fonds : ${fund.name}`,
    `Stratégie : ${fund.strategy}`,
    `Millésime : ${fund.vintage_year}`,
    `Taille cible : ${frenchEuros(fund.target_size)}`,
    `Nombre de SPV : ${spvCount}`,
  ];
}

function spvLines(spv: Spv, fund: Fund | undefined): string[] {
  return [
    `Dénomination : ${spv.name}`,
    `Forme : ${spv.legal_form}`,
    `SIREN : ${spv.siren}`,
    `Associé unique : ${fund?.name ?? "Aurore Capital Partners"}`,
    "Objet : acquisition, construction et cession d'actifs immobiliers.",
  ];
}

/** A workbook of lots: the sales rate it shows is the operation's own. */
function salesGrid(o: Operation, random: SeedContext["random"]): DocumentFile {
  const lots = typeof o.data.nombre_lots === "number" ? Math.min(o.data.nombre_lots, 60) : 20;
  const rate = Number(o.data.taux_commercialisation ?? 50) / 100;
  const price = Number(o.data.prix_moyen_m2 ?? 4000);
  const rows: Array<Array<string | number>> = [
    ["Lot", "Typologie", "Surface (m2)", "Prix TTC (EUR)", "Statut"],
  ];
  for (let i = 1; i <= lots; i++) {
    const type = random.pick(["T1", "T2", "T2", "T3", "T3", "T4", "T5"] as const);
    const surface = { T1: 28, T2: 44, T3: 63, T4: 81, T5: 98 }[type] + random.int(-4, 6);
    const status = i <= Math.round(lots * rate) ? random.pick(["réservé", "acté"]) : "disponible";
    rows.push([
      `${o.name.split(" – ")[0]} – lot ${i}`,
      type,
      surface,
      surface * Math.round(price),
      status,
    ]);
  }
  return { kind: "xlsx", sheet: "Lots", rows };
}

function businessPlan(o: Operation): DocumentFile {
  const outstanding = Number(o.financial_summary.encours ?? 0);
  const rows: Array<Array<string | number>> = [
    ["Année", "Chiffre d'affaires (EUR)", "Coûts travaux (EUR)", "Encours dette (EUR)"],
  ];
  for (let year = 0; year < 4; year++) {
    rows.push([
      2026 + year,
      Math.round(outstanding * (0.3 + 0.25 * year)),
      Math.round(outstanding * (0.4 - 0.08 * year)),
      Math.round(outstanding * (1 - 0.3 * year) > 0 ? outstanding * (1 - 0.3 * year) : 0),
    ]);
  }
  return { kind: "xlsx", sheet: "Business plan", rows };
}

/** The last quarter over at `day`: a report sent in November covers the third quarter. */
function quarter(day: string): string {
  const current = Math.ceil(Number(day.slice(5, 7)) / 3);
  const year = Number(day.slice(0, 4));
  return current === 1 ? `T4 ${year - 1}` : `T${current - 1} ${year}`;
}

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}
