import type { Notification } from "../models/alerts.js";
import type { CalendarEvent } from "../models/calendar.js";
import type { JsonObject } from "../models/common.js";
import type { Deal, DealStatus } from "../models/deals.js";
import type { Dashboard, SavedView } from "../models/delegated.js";
import type { Entity } from "../models/entity.js";
import type { Note, Operation } from "../models/operations.js";
import type { Operator, OperatorType } from "../models/operators.js";
import type { SirenRecord } from "../models/siren.js";
import type { Fund, Spv } from "../models/structures.js";
import type { FieldDefinition, TaxonomyDimension } from "../models/taxonomies.js";
import type { User } from "../models/users.js";
import type { Recommendation, WorkflowDefinition } from "../models/workflows.js";
import { Random } from "../random.js";
import { withCheckDigit } from "../siren.js";
import { FIELD_DEFINITIONS } from "./field-definitions.js";
import {
  CITIES,
  DEAL_THEMES,
  ENTITY_NAME,
  FIRST_NAMES,
  FORMES,
  FUNDS,
  LAST_NAMES,
  OPERATOR_NAMES,
  PROGRAMME_NAMES,
  PROGRAMME_PREFIXES,
  SOUS_CLASSES,
} from "./names.js";
import { TAXONOMIES } from "./taxonomies.js";
import { buildColleagues, buildUsers, DEMO_USERS } from "./users.js";

export { DEMO_USERS } from "./users.js";

export interface DemoData {
  entity: Entity;
  funds: Fund[];
  spvs: Spv[];
  operators: Operator[];
  operations: Operation[];
  deals: Deal[];
  calendarEvents: CalendarEvent[];
  notes: Note[];
  notifications: Notification[];
  users: User[];
  savedViews: SavedView[];
  dashboards: Dashboard[];
  recommendations: Recommendation[];
  workflows: WorkflowDefinition[];
  sirenRecords: SirenRecord[];
  taxonomies: TaxonomyDimension[];
  fieldDefinitions: FieldDefinition[];
}

export interface DemoOptions {
  /** Same seed and same `today`: same data, byte for byte. */
  seed: string;
  /** The business date the data is centred on (YYYY-MM-DD), so "due this month" means something. */
  today: string;
  /**
   * The sandbox clock's now when the data is built (ms since the epoch; default: the machine's):
   * nothing done is seeded after it. Tests set it to build a day at any hour.
   */
  now?: number;
}

const DAY_MS = 86_400_000;

/** Builds the whole demo data set. Pure: depends only on its options. */
export function buildDemoData({ seed, today, now }: DemoOptions): DemoData {
  const rng = new Random(seed);
  const { at, day, past } = demoDates(today, now);
  const money = (euros: number) => euros.toFixed(2);
  const person = () => `${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES)}`;
  const sirenFrom = () => withCheckDigit(String(rng.int(30_000_000, 99_999_999)));

  const entity: Entity = {
    id: rng.uuid(),
    name: ENTITY_NAME,
    environment: "sandbox",
    currency: "EUR",
  };

  const users = buildUsers(at);

  const funds: Fund[] = FUNDS.map(([name, strategy, vintage], i) => ({
    id: rng.uuid(),
    name,
    strategy,
    vintage_year: vintage,
    currency: "EUR",
    target_size: money(rng.int(8, 30) * 5_000_000),
    status:
      vintage <= 2019
        ? "harvesting"
        : i === 5
          ? "investing"
          : rng.pick(["investing", "harvesting"] as const),
    created_at: at(-(2026 - vintage) * 365),
    updated_at: at(-rng.int(1, 60)),
  }));

  const regions = [
    "Rhône",
    "Gironde",
    "Atlantique",
    "Nord",
    "Occitanie",
    "Provence",
    "Bretagne",
    "Alsace",
    "Alpes",
    "Île-de-France",
    "Val de Loire",
    "Côte d'Azur",
  ];
  const spvs: Spv[] = regions.map((region, i) => {
    const fund = funds[i % funds.length] as Fund;
    return {
      id: rng.uuid(),
      name: `${i % 3 === 0 ? "SCI" : "SAS"} Aurore ${region}`,
      legal_form: i % 3 === 0 ? "SCI" : "SAS",
      siren: sirenFrom(),
      fond_id: fund.id,
      status: i === 11 ? "in_liquidation" : "active",
      external_id: `SPV-${String(i + 1).padStart(3, "0")}`,
      created_at: at(-rng.int(400, 2000)),
      updated_at: at(-rng.int(1, 90)),
    };
  });

  const operators = buildOperators(rng, at, person, sirenFrom);
  const validOperators = operators.filter((o) => !o.data.siren_a_verifier);
  for (const o of operators) delete o.data.siren_a_verifier;

  const operations = buildOperations(rng, at, day, money, spvs, validOperators);
  const deals = buildDeals(rng, at, day, money, operations, validOperators, users);
  const calendarEvents = buildCalendar(rng, at, day, entity, operations, spvs);
  const notes = buildNotes(rng, at, operations, users);
  // The rest of the team joins after the draws that pick among users, so that nothing moves.
  users.push(...buildColleagues(at));
  const notifications = buildNotifications(rng, at, past, operations);
  const { savedViews, dashboards } = buildUserObjects(rng, at, spvs);
  const { recommendations, workflows } = buildWorkflows(rng, at, operations);

  const sirenRecords: SirenRecord[] = [
    ...validOperators.map((o) => ({
      name: o.name ?? "",
      siren: o.siren ?? "",
      forme: rng.pick(FORMES),
    })),
    ...spvs.map((s) => ({ name: s.name, siren: s.siren, forme: s.legal_form })),
  ].map(({ name, siren, forme }) => {
    const [city, postcode] = rng.pick(CITIES);
    return {
      siren,
      denomination: name.toUpperCase(),
      forme_juridique: forme,
      code_naf: rng.pick(["41.10A", "41.20A", "68.10Z", "68.20B", "70.10Z"]),
      adresse: `${rng.int(1, 180)} rue ${rng.pick(PROGRAMME_NAMES)}, ${postcode} ${city}`,
      date_creation: day(-rng.int(900, 9000)),
      etat_administratif: "actif",
      source: "local",
      fetched_at: at(-rng.int(10, 200)),
    };
  });

  return {
    entity,
    funds,
    spvs,
    operators,
    operations,
    deals,
    calendarEvents,
    notes,
    notifications,
    users,
    savedViews,
    dashboards,
    recommendations,
    workflows,
    sirenRecords,
    taxonomies: structuredClone(TAXONOMIES),
    fieldDefinitions: structuredClone(FIELD_DEFINITIONS),
  };
}

export type At = (days: number, minutes?: number) => string;
export type Day = (days: number) => string;
/** An instant of something already done, no later than the sandbox's clock. */
export type Past = (instant: string) => string;

/**
 * Dates relative to `today` at 09:00 UTC: `at(-3, 30)` is three days ago at 09:30. What happened
 * today never happens after the sandbox's clock: on the real today, before 09:00, an instant of
 * today that would still be ahead is a minute ago instead (a login, a detection, a read).
 * `past` holds any other instant of something done (a document filed a few days after its date,
 * a payment recorded the morning after its value date) to the same bound, and to today.
 */
export function demoDates(today: string, now = Date.now()): { at: At; day: Day; past: Past } {
  const t0 = Date.parse(`${today}T09:00:00.000Z`);
  if (Number.isNaN(t0)) throw new Error(`today must be a date (YYYY-MM-DD), got ${today}`);
  const latest = new Date(now).toISOString().slice(0, 10) === today ? now - 60_000 : Infinity;
  const at = (days: number, minutes = 0) => {
    const instant = t0 + days * DAY_MS + minutes * 60_000;
    return new Date(days <= 0 ? Math.min(instant, latest) : instant).toISOString();
  };
  const endOfToday = Date.parse(`${today}T23:59:00.000Z`);
  const past = (instant: string) =>
    new Date(Math.min(Date.parse(instant), latest, endOfToday)).toISOString();
  return { at, day: (days) => at(days).slice(0, 10), past };
}

function buildOperators(
  rng: Random,
  at: At,
  person: () => string,
  sirenFrom: () => string,
): Operator[] {
  const types: OperatorType[] = [
    "promoteur",
    "promoteur",
    "promoteur",
    "marchand_de_biens",
    "asset_manager",
    "fonciere",
    "entrepreneur_general",
  ];
  return OPERATOR_NAMES.map((name, i) => {
    const typo = i >= 20; // the last three carry a mistyped SIREN, for validation demos
    let siren = sirenFrom();
    if (typo) siren = `${siren.slice(0, 8)}${(Number(siren[8]) + 1 + (i % 8)) % 10}`;
    const score = rng.int(38, 96);
    const litigation = i % 7 === 3;
    const hasParent = rng.chance(0.4);
    const data: JsonObject = {
      chiffre_affaires: (rng.int(800, 90_000) * 10).toFixed(2),
      effectif: rng.int(4, 420),
      annee_creation: rng.int(1978, 2019),
      operations_livrees: rng.int(2, 60),
      fonds_propres: (rng.int(300, 25_000) * 10).toFixed(2),
    };
    if (typo) data.siren_a_verifier = true;
    return {
      id: rng.uuid(),
      data,
      source_extraction: rng.chance(0.3),
      litiges_en_cours: litigation,
      created_at: at(-rng.int(300, 1500)),
      updated_at: at(-rng.int(1, 120)),
      name,
      siren,
      type: types[i % types.length] ?? "promoteur",
      litiges_detail: litigation
        ? rng.pick([
            "Contentieux avec un sous-traitant sur le lot gros œuvre, provisionné.",
            "Recours d'un riverain contre un permis de construire, audience prévue.",
            "Litige avec un acquéreur VEFA sur des retards de livraison.",
          ])
        : null,
      responsable_interne: person(),
      reputation_gouvernance_score: score,
      reputation_gouvernance_label:
        score >= 80 ? "Solide" : score >= 60 ? "Satisfaisant" : "À surveiller",
      forme_societe_mere: hasParent ? rng.pick(["SAS", "SA", "SE"]) : null,
      siren_mere: hasParent ? sirenFrom() : null,
      // Most come from the CRM that synchronises them; a few were created in the application.
      external_id: i % 5 === 2 ? null : `CRM-OPR-${String(i + 1).padStart(4, "0")}`,
    };
  });
}

const STATUS_PLAN: ReadonlyArray<readonly [status: string, count: number]> = [
  ["sourcing", 8],
  ["instruction", 10],
  ["travaux", 16],
  ["commercialisation", 12],
  ["livraison", 8],
  ["remboursee", 10],
  ["cloturee", 5],
  ["abandonnee", 3],
];

/** The phase each operation status belongs to (the phase is derived, never set). */
export const PHASE_BY_STATUS: Record<string, string> = {
  sourcing: "origination",
  instruction: "origination",
  travaux: "execution",
  commercialisation: "execution",
  livraison: "sortie",
  remboursee: "terminee",
  cloturee: "terminee",
  abandonnee: "terminee",
};

const AGE_BY_PHASE: Record<string, readonly [number, number]> = {
  origination: [10, 200],
  execution: [250, 700],
  sortie: [600, 900],
  terminee: [900, 1800],
};

const CALLED_SHARE_BY_STATUS: Record<string, number> = {
  instruction: 0.1,
  travaux: 0.6,
  commercialisation: 0.85,
  livraison: 1,
  remboursee: 1,
  cloturee: 1,
};

const PROGRESS_BY_STATUS: Record<string, string[]> = {
  sourcing: [],
  instruction: ["permis_obtenu"],
  travaux: ["permis_obtenu", "purge_recours", "financement_obtenu", "travaux_demarres"],
  commercialisation: [
    "permis_obtenu",
    "purge_recours",
    "financement_obtenu",
    "travaux_demarres",
    "hors_eau_hors_air",
  ],
  livraison: [
    "permis_obtenu",
    "purge_recours",
    "financement_obtenu",
    "travaux_demarres",
    "hors_eau_hors_air",
    "achevement",
    "livraison_partielle",
  ],
};

function buildOperations(
  rng: Random,
  at: At,
  day: Day,
  money: (n: number) => string,
  spvs: Spv[],
  operators: Operator[],
): Operation[] {
  const statuses = rng.shuffle(STATUS_PLAN.flatMap(([s, n]) => Array<string>(n).fill(s)));
  const classes = [
    "residentiel",
    "residentiel",
    "residentiel",
    "bureaux",
    "commerce",
    "logistique",
    "hotellerie",
    "sante",
    "mixte",
  ];
  const investmentTypes = [
    "dette_senior",
    "dette_senior",
    "dette_mezzanine",
    "obligations",
    "fonds_propres",
    "compte_courant",
  ];
  const usedNames = new Set<string>();
  const activeSpvs = spvs.filter((s) => s.status === "active");

  return statuses.map((status, i): Operation => {
    let name: string;
    let city: string;
    let postcode: string;
    do {
      [city, postcode] = rng.pick(CITIES);
      name = `${rng.pick(PROGRAMME_PREFIXES)} ${rng.pick(PROGRAMME_NAMES)} – ${city}`;
    } while (usedNames.has(name));
    usedNames.add(name);

    const closed = PHASE_BY_STATUS[status] === "terminee";
    const closedOrEarly = closed || status === "sourcing";
    const classe = rng.pick(classes);
    const spv =
      status === "sourcing" && rng.chance(0.5) ? null : rng.pick(closed ? spvs : activeSpvs);
    const phase = PHASE_BY_STATUS[status] ?? "origination";
    const [minAge, maxAge] = AGE_BY_PHASE[phase] ?? [10, 200];
    const ageDays = rng.int(minAge, maxAge);
    const engaged = rng.int(40, 1200) * 10_000;
    const calledShare = CALLED_SHARE_BY_STATUS[status] ?? 0;
    const called = Math.round(engaged * calledShare);
    const repaid =
      status === "remboursee" || status === "cloturee"
        ? called
        : status === "livraison"
          ? Math.round((called * rng.int(10, 60)) / 100)
          : 0;
    const outstanding = called - repaid;
    const senior = Math.round((outstanding * rng.int(55, 80)) / 100);
    const marketValue = Math.round((engaged * rng.int(140, 210)) / 100);
    const noi = Math.round((marketValue * rng.int(40, 65)) / 1000);
    const debtService = Math.round((outstanding * rng.int(70, 120)) / 1000);
    const lots = rng.int(8, 160);
    const progress = PROGRESS_BY_STATUS[status];
    const watch = rng.next();
    const internal = closed
      ? "nominal"
      : watch < 0.7
        ? "nominal"
        : watch < 0.85
          ? "sous_surveillance"
          : watch < 0.95
            ? "alerte"
            : "precontentieux";
    const pending = i % 14 === 5;
    const rate = (rng.int(70, 125) / 10).toFixed(2);
    const duration = rng.int(18, 36);
    const start = -ageDays;
    const kpi: JsonObject =
      status === "sourcing"
        ? { as_of: null }
        : {
            as_of: day(-rng.int(5, 95)),
            periode: "12 mois glissants",
            crd_total: money(outstanding),
            crd_senior: money(senior),
            crd_mezzanine: money(outstanding - senior),
            valeur_venale: money(marketValue),
            noi: money(noi),
            service_dette: money(debtService),
            ltv: marketValue > 0 ? ((outstanding / marketValue) * 100).toFixed(2) : "0.00",
            // Ratios come as numbers, amounts as strings: the spec allows both (part 2).
            dscr: debtService > 0 ? Math.round((noi / debtService) * 100) / 100 : null,
          };
    return {
      id: rng.uuid(),
      relationship_status: pending ? "pending_attachment" : "attached",
      relationship_label: pending ? "En attente de rattachement" : "Rattachée",
      name,
      status,
      phase,
      version: rng.int(1, 9),
      created_at: at(start, rng.int(0, 600)),
      updated_at: at(-rng.int(0, Math.min(ageDays, 60)), rng.int(0, 600)),
      spv_id: spv?.id ?? null,
      type_investissement: rng.pick(investmentTypes),
      type_operation:
        classe === "residentiel"
          ? rng.pick(["promotion", "promotion", "marchand_de_biens"])
          : rng.pick(["promotion", "rehabilitation", "value_add", "amenagement"]),
      classe_actif: classe,
      statut_interne: internal,
      // Milestones reached so far: all of the status's list, sometimes without the latest one.
      statut_operationnel:
        progress === undefined
          ? null
          : progress.slice(0, Math.max(0, progress.length - rng.int(0, 1))),
      sous_classe_actif: rng.pick(SOUS_CLASSES[classe] ?? ["Autre"]),
      financial_summary: {
        devise: "EUR",
        montant_engage: money(engaged),
        montant_appele: money(called),
        montant_rembourse: money(repaid),
        encours: money(outstanding),
        taux_annuel: rate,
        duree_mois: duration,
        date_investissement: status === "sourcing" ? null : day(start + 30),
        date_echeance: status === "sourcing" ? null : day(start + 30 + duration * 30),
      },
      reporting_summary: {
        frequence: "trimestrielle",
        dernier_reporting: status === "sourcing" ? null : day(-rng.int(5, 100)),
        prochain_reporting: closedOrEarly ? null : day(rng.int(-10, 80)),
        statut_reporting: closedOrEarly
          ? "non_applicable"
          : rng.chance(0.8)
            ? "a_jour"
            : "en_retard",
      },
      description: `Opération de ${classe === "residentiel" ? `${lots} logements` : `${rng.int(1200, 18000)} m² de ${classe}`} à ${city}, portée par un opérateur partenaire.`,
      operateur_id: rng.pick(operators).id,
      fond_id: spv?.fond_id ?? null,
      data: {
        surface_plancher: (lots * rng.int(55, 75)).toFixed(1),
        nombre_lots: lots,
        ville: city,
        code_postal: postcode,
        date_livraison_prevue: closed ? day(start + 600) : day(rng.int(60, 900)),
        taux_commercialisation: (closed ? 100 : rng.int(0, 1000) / 10).toFixed(1),
        prix_moyen_m2: rng.int(2900, 9800).toFixed(2),
        duree_travaux: rng.int(14, 30),
        certification_environnementale: rng.pick([
          "nf_habitat_hqe",
          "breeam",
          "bbca",
          "re2020",
          "aucune",
        ]),
        garantie_financiere_achevement: rng.chance(0.8),
      },
      kpi_snapshot: kpi,
      // Most come from the portfolio system that synchronises them; a few were created by hand.
      external_id: i % 9 === 4 ? null : `PMS-OPE-${String(i + 1).padStart(5, "0")}`,
    };
  });
}

const DEAL_PLAN: ReadonlyArray<readonly [DealStatus, number]> = [
  ["sourcing", 5],
  ["analyse", 5],
  ["due_diligence", 4],
  ["comite", 4],
  ["closing", 4],
  ["abandonne", 3],
];

function buildDeals(
  rng: Random,
  at: At,
  day: Day,
  money: (n: number) => string,
  operations: Operation[],
  operators: Operator[],
  users: User[],
): Deal[] {
  const early = operations.filter((o) => o.status === "sourcing" || o.status === "instruction");
  const owners = users.filter((u) => u.status === "approved").map((u) => u.display_name);
  return DEAL_PLAN.flatMap(([status, count]) => Array<DealStatus>(count).fill(status)).map(
    (status, i) => {
      const [city] = rng.pick(CITIES);
      const sourced = -rng.int(15, 320);
      const linked =
        status === "closing" || (status === "comite" && i % 2 === 0)
          ? early[i % early.length]
          : undefined;
      return {
        id: rng.uuid(),
        name: `${rng.pick(DEAL_THEMES)} ${city} – ${rng.pick(PROGRAMME_NAMES).replace(/^(des|du|de la|de l') /, "")}`,
        status,
        created_at: at(sourced),
        updated_at: at(Math.min(-1, sourced + rng.int(1, 60))),
        description: rng.chance(0.8)
          ? `Dossier présenté par ${rng.pick(operators).name}, ticket recherché en ${rng.pick(["dette senior", "mezzanine", "fonds propres"])}.`
          : null,
        montant_estime:
          status === "sourcing" && rng.chance(0.4) ? null : money(rng.int(50, 1500) * 10_000),
        classe_actif: rng.pick([
          "residentiel",
          "residentiel",
          "bureaux",
          "logistique",
          "mixte",
          "sante",
        ]),
        operateur_id: rng.chance(0.85) ? rng.pick(operators).id : null,
        operation_id: linked?.id ?? null,
        responsable: rng.pick(owners),
        date_sourcing: day(sourced),
        date_closing_prevue:
          status === "abandonne" || status === "sourcing" ? null : day(rng.int(10, 150)),
      };
    },
  );
}

function buildCalendar(
  rng: Random,
  at: At,
  day: Day,
  entity: Entity,
  operations: Operation[],
  spvs: Spv[],
): CalendarEvent[] {
  const live = operations.filter(
    (o) => !["remboursee", "cloturee", "abandonnee"].includes(o.status),
  );
  const kinds = [
    ["covenant_deadline", "Test de covenant"],
    ["reporting_due", "Remise du reporting trimestriel"],
    ["ag_date", "Assemblée générale"],
    ["echeance", "Échéance de remboursement"],
    ["visite_chantier", "Visite de chantier"],
    ["custom", "Point opérateur"],
  ] as const;
  const events: CalendarEvent[] = [];
  for (let i = 0; i < 50; i++) {
    const [type, label] = kinds[i % kinds.length] as (typeof kinds)[number];
    const operation = type === "ag_date" ? undefined : rng.pick(live);
    const spv = operation ? spvs.find((s) => s.id === operation.spv_id) : rng.pick(spvs);
    const offset = i < 12 ? rng.int(0, 9) : rng.int(-40, 110); // a dozen fall in the coming days
    const source = i % 5 === 1 ? "alert" : i % 5 === 3 ? "manual" : "operation_schedule";
    // Proposed or entered before today, however far ahead the event is.
    const created = Math.min(offset - rng.int(5, 60), -1);
    const title = `${label} – ${operation?.name ?? spv?.name ?? entity.name}`;
    events.push({
      id: rng.uuid(),
      entity_id: entity.id,
      title,
      description: rng.chance(0.6)
        ? `${label} prévu${type === "ag_date" ? "e" : ""} le ${day(offset)}.`
        : null,
      event_date: day(offset),
      event_type: type,
      operation_id: operation?.id ?? null,
      operateur_id: operation?.operateur_id ?? null,
      fond_id: operation?.fond_id ?? spv?.fond_id ?? null,
      spv_id: spv?.id ?? null,
      source,
      source_alert_id: source === "alert" ? rng.uuid() : null,
      confidence: source === "alert" ? rng.int(55, 97) / 100 : null,
      accepted: source === "alert" ? rng.pick([true, false, null, null]) : null,
      idempotency_receipt:
        source === "manual"
          ? {
              client_request_id: `cal-${rng.token(20)}`,
              actor_id: DEMO_USERS.camille,
              capability: "calendar_events",
              payload_digest: rng.token(64, "0123456789abcdef"),
              replayed: false,
            }
          : null,
      created_at: at(created),
      updated_at: at(Math.min(created + rng.int(0, 4), 0)),
    });
  }
  return events;
}

const NOTE_TEXTS: ReadonlyArray<readonly [type: string, category: string, text: string]> = [
  [
    "reporting",
    "reporting",
    "Reporting trimestriel reçu : avancement conforme au planning, taux de commercialisation en hausse.",
  ],
  [
    "call",
    "suivi",
    "Appel avec l'opérateur : démarrage du lot façades décalé de trois semaines, sans impact sur la date de livraison.",
  ],
  [
    "comite",
    "comite",
    "Comité de suivi : maintien de la notation, vigilance sur le coût des travaux.",
  ],
  [
    "risque",
    "risque",
    "Dépassement du budget travaux de 4 % : demande d'un plan de financement actualisé à l'opérateur.",
  ],
  [
    "libre",
    "suivi",
    "Visite de chantier effectuée : hors d'eau hors d'air atteint, photos versées au dossier.",
  ],
  ["reporting", "reporting", "Reporting en retard : relance envoyée à l'opérateur."],
  [
    "call",
    "suivi",
    "Échange avec le notaire : actes de vente des derniers lots programmés le mois prochain.",
  ],
];

function buildNotes(rng: Random, at: At, operations: Operation[], users: User[]): Note[] {
  const authors = users.filter((u) => u.status === "approved");
  const notes: Note[] = [];
  for (const operation of operations.slice(0, 36)) {
    const count = rng.int(1, 4);
    for (let n = 0; n < count; n++) {
      const [type, category, text] = rng.pick(NOTE_TEXTS);
      const author = rng.pick(authors);
      const written = -rng.int(1, 240);
      const resolved = type === "risque" && rng.chance(0.5);
      const imported = rng.chance(0.2);
      notes.push({
        id: rng.uuid(),
        operation_id: operation.id,
        user_id: author.id,
        author_name: author.display_name,
        content: text,
        note_type: type,
        date: at(written),
        text,
        category,
        created_at: at(written, 30),
        updated_at: at(resolved ? Math.min(written + 7, 0) : written, 30),
        description_i18n: imported ? { fr: text, en: "Imported follow-up note." } : null,
        source_created_at: imported ? at(written - 1) : null,
        source_updated_at: imported ? at(written - 1, 90) : null,
        is_resolved: resolved,
        resolved_by: resolved ? author.id : null,
        resolved_at: resolved ? at(Math.min(written + 7, 0)) : null,
      });
    }
  }
  return notes;
}

function buildNotifications(
  rng: Random,
  at: At,
  past: Past,
  operations: Operation[],
): Notification[] {
  const watched = operations.filter((o) => o.statut_interne !== "nominal");
  // Interest can be late only where funds were drawn and a quarter's interest fell due.
  const drawn = (o: Operation) => {
    const invested = o.financial_summary.date_investissement;
    return (
      Number(o.financial_summary.montant_appele) > 0 &&
      typeof invested === "string" &&
      invested < at(-95).slice(0, 10)
    );
  };
  const owing = watched.filter(drawn);
  const templates = [
    ["critical", "Covenant LTV dépassé"],
    ["critical", "Retard de paiement des intérêts"],
    ["warning", "Reporting trimestriel en retard"],
    ["warning", "Dépassement du budget travaux"],
    ["info", "Nouveau document disponible"],
    ["info", "Échéance dans 30 jours"],
  ] as const;
  return Array.from({ length: 18 }, (_, i) => {
    const [severity, title] = templates[i % templates.length] as (typeof templates)[number];
    const pool = title === "Retard de paiement des intérêts" && owing.length > 0 ? owing : watched;
    const operation = rng.pick(pool.length > 0 ? pool : operations);
    const id = rng.uuid();
    const read = i >= 12 || (severity === "info" && rng.chance(0.5));
    const createdAt = at(-rng.int(0, 30), rng.int(0, 600));
    return {
      id,
      title: `${title} – ${operation.name}`,
      severity,
      read,
      // Read two hours after it arrived; the alerts' seed links notifications to alerts.
      read_at: read ? past(new Date(Date.parse(createdAt) + 7_200_000).toISOString()) : null,
      operation_id: operation.id,
      alert_id: null,
      created_at: createdAt,
    };
  });
}

function buildUserObjects(rng: Random, at: At, spvs: Spv[]) {
  const view = (
    userId: string,
    name: string,
    type: SavedView["type"],
    filters: JsonObject,
    columns: string[],
    sortBy: string,
  ): SavedView => ({
    id: rng.uuid(),
    user_id: userId,
    name,
    type,
    filters,
    columns,
    sort: [{ sort_by: sortBy, sort_order: "asc" }],
    icon: rng.pick(["star", "folder", "chart"]),
    color: rng.pick(["blue", "green", "amber"]),
    is_default: false,
    created_at: at(-rng.int(30, 200)),
    updated_at: at(-rng.int(1, 29)),
  });
  const savedViews: SavedView[] = [
    view(
      DEMO_USERS.camille,
      "Opérations actives",
      "operations",
      { statut: ["travaux", "commercialisation"] },
      ["name", "statut", "classe_actif", "montant_engage"],
      "name",
    ),
    view(
      DEMO_USERS.camille,
      "Sous surveillance",
      "operations",
      { statut_interne: ["sous_surveillance", "alerte"] },
      ["name", "statut_interne", "encours"],
      "encours",
    ),
    view(
      DEMO_USERS.camille,
      "Pipeline en comité",
      "deals",
      { status: ["comite"] },
      ["name", "montant_estime", "date_closing_prevue"],
      "date_closing_prevue",
    ),
    view(
      DEMO_USERS.julien,
      "Mes dossiers résidentiels",
      "operations",
      { classe_actif: ["residentiel"] },
      ["name", "statut", "ville"],
      "name",
    ),
  ];
  const dashboard = (
    userId: string,
    name: string,
    shared: boolean,
    spv: Spv | undefined,
  ): Dashboard => ({
    id: rng.uuid(),
    name,
    description: shared ? "Tableau partagé avec le comité d'investissement." : null,
    user_id: userId,
    layout: [
      { widget: "kpi", metric: "encours", x: 0, y: 0, w: 4, h: 2 },
      { widget: "chart", metric: "operations_by_status", x: 4, y: 0, w: 8, h: 4 },
    ],
    filters: spv ? { spv_id: spv.id } : {},
    is_shared: shared,
    share_token: shared ? `shr_${rng.token(32)}` : null,
    created_at: at(-rng.int(30, 300)),
    updated_at: at(-rng.int(1, 29)),
    default_scope: spv ? { spv_ids: [spv.id] } : null,
    sharing: shared
      ? { visibility: "members", permissions: ["view"], members: [DEMO_USERS.julien] }
      : { visibility: "private", permissions: [], members: [] },
    can_edit: true,
    can_manage: true,
  });
  const dashboards: Dashboard[] = [
    dashboard(DEMO_USERS.camille, "Comité mensuel", true, undefined),
    dashboard(DEMO_USERS.camille, `Suivi ${spvs[0]?.name ?? "SPV"}`, false, spvs[0]),
    dashboard(DEMO_USERS.julien, "Mes alertes", false, undefined),
  ];
  return { savedViews, dashboards };
}

/** The schedule a preset's mode suggests: 08:00 UTC, on Mondays, on the 1st (workflows.ts). */
export const DEFAULT_SCHEDULES = {
  daily: "0 8 * * *",
  weekly: "0 8 * * 1",
  monthly: "0 8 1 * *",
  on_event: "on_event",
} as const;

/** The workflow presets catalogue: key, name, processing family and types, effect, mode. */
export const PRESETS = [
  [
    "covenant_monitoring",
    "Surveillance des covenants",
    "monitoring",
    ["covenant_check", "alert"],
    "Détecte tout dépassement de LTV ou de DSCR dès la réception du reporting.",
    "weekly",
  ],
  [
    "reporting_reminder",
    "Relance des reportings",
    "reporting",
    ["reminder", "email"],
    "Relance automatiquement les opérateurs dont le reporting est en retard.",
    "daily",
  ],
  [
    "construction_progress_check",
    "Suivi de l'avancement des travaux",
    "monitoring",
    ["milestone_check"],
    "Compare l'avancement déclaré au planning contractuel.",
    "monthly",
  ],
  [
    "sales_pace_alert",
    "Alerte sur le rythme de commercialisation",
    "monitoring",
    ["kpi_threshold", "alert"],
    "Signale les programmes dont le rythme de réservation ralentit.",
    "weekly",
  ],
  [
    "maturity_followup",
    "Anticipation des échéances",
    "reporting",
    ["calendar", "reminder"],
    "Crée les échéances de remboursement dans le calendrier 90 jours avant.",
    "on_event",
  ],
  [
    "kyc_refresh",
    "Mise à jour KYC des opérateurs",
    "compliance",
    ["document_request"],
    "Demande les pièces KYC expirées aux opérateurs.",
    "monthly",
  ],
] as const;

function buildWorkflows(rng: Random, at: At, operations: Operation[]) {
  const watched = operations.filter(
    (o) => o.statut_interne !== "nominal" && o.phase !== "terminee",
  );
  const workflows: WorkflowDefinition[] = [];
  const recommendations: Recommendation[] = PRESETS.map(
    ([presetKey, title, family, types, effect, mode], i) => {
      const status: Recommendation["status"] =
        i === 4 ? "proposed" : i === 5 ? "applied" : "validated";
      const rec: Recommendation = {
        id: `reco_${presetKey}_${rng.token(6)}`,
        preset_key: presetKey,
        title,
        rationale: `${rng.int(2, 9)} opérations du portefeuille relèvent de ce cas : ${effect.toLowerCase()}`,
        processing_family: family,
        processing_types: [...types],
        expected_effect: effect,
        business_scope: family === "compliance" ? "operateurs" : "operations",
        schedule_mode: mode,
        suggested_schedule: DEFAULT_SCHEDULES[mode],
        operation_ids: rng
          .shuffle(watched)
          .slice(0, rng.int(2, 5))
          .map((o) => o.id),
        confidence: rng.int(62, 96) / 100,
        status,
        applied_workflow_key: null,
        created_at: at(-rng.int(1, 20)),
      };
      if (status === "applied") {
        const workflow = workflowFromRecommendation(
          rec,
          `wf_${presetKey}_${rng.token(6)}`,
          undefined,
          at(-3),
        );
        rec.applied_workflow_key = workflow.key;
        workflows.push(workflow);
      }
      return rec;
    },
  );
  return { recommendations, workflows };
}

/** The definition a recommendation turns into; shared by the seed and the create route. */
export function workflowFromRecommendation(
  rec: Recommendation,
  key: string,
  overrides: { name?: string; enabled?: boolean } | undefined,
  createdAt: string,
): WorkflowDefinition {
  const enabled = overrides?.enabled ?? true;
  return {
    key,
    name: overrides?.name ?? rec.title,
    description: rec.expected_effect,
    processing_family: rec.processing_family,
    schedule: rec.suggested_schedule,
    enabled,
    is_custom: false,
    is_editable: true,
    is_deletable: true,
    can_toggle: true,
    origin: "system",
    business_scope: rec.business_scope,
    expected_effect: rec.expected_effect,
    processing_types: [...rec.processing_types],
    preset_key: rec.preset_key,
    state: enabled ? "active" : "inactive",
    schedule_mode: rec.schedule_mode,
    configuration: { operation_ids: [...rec.operation_ids], recommendation_id: rec.id },
    metadata: { created_from: "recommendation", created_at: createdAt },
    last_run_at: null,
    next_run_at: enabled && rec.schedule_mode !== "on_event" ? createdAt : null,
    last_error: null,
  };
}
