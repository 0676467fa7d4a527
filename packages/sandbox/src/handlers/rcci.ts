import { businessDate } from "../clock.js";
import { OPEN_RISK_STATUSES } from "../data/operators.js";
import { CLOSED_OPERATION_STATUSES } from "../data/taxonomies.js";
import type { Alert } from "../models/alerts.js";
import { CONTROL_STATUSES, type RcciSummary } from "../models/entity.js";
import { fromCents, toCents } from "../money.js";
import { checkSiren } from "../siren.js";
import type { SandboxState } from "../state.js";

type Control = RcciSummary["controls"][number];
type ControlStatus = Control["status"];

const UNCLOSED: readonly Alert["status"][] = ["open", "acknowledged", "postponed"];
const WATCHED = ["alerte", "precontentieux"];
const WATCHLIST_SIZE = 10;

const encoursOf = (o: { financial_summary: Record<string, unknown> }) =>
  toCents(o.financial_summary.encours);

/** A control: compliant with no finding, else `whenFound` (worse when `worse` holds). */
function control(
  code: string,
  label: string,
  findings: number,
  whenFound: ControlStatus,
  detail: string,
): Control {
  return { code, label, status: findings === 0 ? "conforme" : whenFound, findings, detail };
}

type Data = SandboxState["data"];

/** What the controls look at: the live operations, unclosed alerts, open third-party risks. */
interface Scope {
  today: string;
  live: Data["operations"];
  watchlist: Data["operations"];
  unclosed: Data["alerts"];
  openRisks: Data["operatorRisks"];
  operators: Data["operators"];
}

const countOf = <T>(items: readonly T[], test: (item: T) => boolean) => items.filter(test).length;

function scopeOf(data: Data, nowMs: number): Scope {
  const closed: readonly string[] = CLOSED_OPERATION_STATUSES;
  const live = data.operations.filter((o) => !closed.includes(o.status));
  return {
    today: businessDate(nowMs),
    live,
    watchlist: live
      .filter((o) => WATCHED.includes(o.statut_interne ?? ""))
      .sort((a, b) => (encoursOf(b) > encoursOf(a) ? 1 : encoursOf(b) < encoursOf(a) ? -1 : 0)),
    unclosed: data.alerts.filter((a) => UNCLOSED.includes(a.status)),
    openRisks: data.operatorRisks.filter((r) => OPEN_RISK_STATUSES.includes(r.status)),
    operators: data.operators,
  };
}

type Findings = ReturnType<typeof findingsOf>;

/** How many of each thing a control counts. */
function findingsOf({ today, live, watchlist, unclosed, openRisks, operators }: Scope) {
  const covenant = (a: Alert) => ["ltv_breach", "dscr_breach"].includes(a.alert_type);
  return {
    covenants: countOf(unclosed, covenant),
    criticalCovenants: countOf(unclosed, (a) => a.severity === "critical" && covenant(a)),
    lateRepayments: countOf(unclosed, (a) => a.alert_type === "late_repayment"),
    badSirens: countOf(operators, (o) => o.siren !== null && !checkSiren(o.siren).valid),
    litigation: countOf(operators, (o) => o.litiges_en_cours),
    severeRisks: countOf(openRisks, (r) => r.level === "eleve" || r.level === "critique"),
    criticalRisks: countOf(openRisks, (r) => r.level === "critique"),
    overdueReviews: countOf(openRisks, (r) => r.review_date !== null && r.review_date < today),
    lateReporting: countOf(live, (o) => o.reporting_summary.statut_reporting === "en_retard"),
    watched: watchlist.length,
    preLitigation: countOf(watchlist, (o) => o.statut_interne === "precontentieux"),
  };
}

/** The controls, in the order they are listed before ranking. */
const CONTROLS: ReadonlyArray<(f: Findings) => Control> = [
  (f) =>
    control(
      "covenants",
      "Respect des covenants financiers (LTV, DSCR)",
      f.covenants,
      f.criticalCovenants > 0 ? "non_conforme" : "a_surveiller",
      `${f.covenants} dépassement(s) non clos, dont ${f.criticalCovenants} critique(s).`,
    ),
  (f) =>
    control(
      "remboursements",
      "Échéances de remboursement",
      f.lateRepayments,
      "non_conforme",
      `${f.lateRepayments} remboursement(s) en retard non régularisé(s).`,
    ),
  (f) =>
    control(
      "identification_contreparties",
      "Identification des contreparties (SIREN)",
      f.badSirens,
      "non_conforme",
      `${f.badSirens} opérateur(s) dont la clé de contrôle du SIREN est fausse.`,
    ),
  (f) =>
    control(
      "contentieux_operateurs",
      "Contentieux des opérateurs",
      f.litigation,
      "a_surveiller",
      `${f.litigation} opérateur(s) déclarent un contentieux en cours.`,
    ),
  (f) =>
    control(
      "risques_tiers",
      "Risques tiers élevés ou critiques",
      f.severeRisks,
      f.criticalRisks > 0 ? "non_conforme" : "a_surveiller",
      `${f.severeRisks} risque(s) ouvert(s) élevé(s) ou critique(s), dont ${f.criticalRisks} critique(s).`,
    ),
  (f) =>
    control(
      "revues_risques",
      "Revues des risques tiers à date",
      f.overdueReviews,
      "a_surveiller",
      `${f.overdueReviews} risque(s) ouvert(s) dont la date de revue est passée.`,
    ),
  (f) =>
    control(
      "reportings",
      "Remise des reportings opérateurs",
      f.lateReporting,
      "a_surveiller",
      `${f.lateReporting} opération(s) en cours avec un reporting en retard.`,
    ),
  (f) =>
    control(
      "operations_sensibles",
      "Opérations en alerte ou en précontentieux",
      f.watched,
      f.preLitigation > 0 ? "non_conforme" : "a_surveiller",
      `${f.watched} opération(s) en cours, dont ${f.preLitigation} en précontentieux.`,
    ),
];

/** Worst first; controls of the same status keep their listed order. */
function rankedControls(findings: Findings): Control[] {
  const rank = (c: Control) => CONTROL_STATUSES.length - 1 - CONTROL_STATUSES.indexOf(c.status);
  return CONTROLS.map((make, i) => ({ c: make(findings), i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .map(({ c }) => c);
}

/**
 * The compliance and internal-control officer's summary (RCCI; spec part 1 names it, part 5
 * gives it `portfolio:read`; its fields are the sandbox's): controls computed from the live
 * operations, alerts, operators and third-party risks, worst first.
 */
export function rcciSummary(state: SandboxState, nowMs: number): RcciSummary {
  const { entity } = state.data;
  const scope = scopeOf(state.data, nowMs);
  const findings = findingsOf(scope);
  return {
    entity: { id: entity.id, name: entity.name },
    as_of: new Date(nowMs).toISOString(),
    controls: rankedControls(findings),
    operations: operationsBlock(state.data, scope),
    alerts: {
      unclosed: scope.unclosed.length,
      by_severity: {
        critical: countOf(scope.unclosed, (a) => a.severity === "critical"),
        warning: countOf(scope.unclosed, (a) => a.severity === "warning"),
        info: countOf(scope.unclosed, (a) => a.severity === "info"),
      },
    },
    operators: {
      total: scope.operators.length,
      litigation: findings.litigation,
      siren_invalid: findings.badSirens,
      reputation_to_watch: countOf(
        scope.operators,
        (o) => o.reputation_gouvernance_label === "À surveiller",
      ),
    },
    third_party_risks: {
      open: scope.openRisks.length,
      by_level: {
        faible: countOf(scope.openRisks, (r) => r.level === "faible"),
        modere: countOf(scope.openRisks, (r) => r.level === "modere"),
        eleve: countOf(scope.openRisks, (r) => r.level === "eleve"),
        critique: findings.criticalRisks,
      },
    },
  };
}

/** The live operations by internal status, and the watchlist, largest outstanding first. */
function operationsBlock(data: Data, { live, watchlist }: Scope): RcciSummary["operations"] {
  const internalCodes =
    data.taxonomies.find((d) => d.dimension === "internal_status")?.values.map((v) => v.code) ?? [];
  return {
    live: live.length,
    by_internal_status: internalCodes.map((code) => {
      const group = live.filter((o) => o.statut_interne === code);
      return {
        statut_interne: code,
        count: group.length,
        encours: fromCents(group.reduce((sum, o) => sum + encoursOf(o), 0n)),
      };
    }),
    watchlist: watchlist.slice(0, WATCHLIST_SIZE).map((o) => ({
      operation_id: o.id,
      name: o.name,
      statut_interne: o.statut_interne ?? "",
      encours: fromCents(encoursOf(o)),
    })),
  };
}
