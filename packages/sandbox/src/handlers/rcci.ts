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

/**
 * The compliance and internal-control officer's summary (RCCI; spec part 1 names it, part 5
 * gives it `portfolio:read`; its fields are the sandbox's): controls computed from the live
 * operations, alerts, operators and third-party risks, worst first.
 */
export function rcciSummary(state: SandboxState, nowMs: number): RcciSummary {
  const { operations, alerts, operators, operatorRisks, entity, taxonomies } = state.data;
  const today = businessDate(nowMs);
  const closed: readonly string[] = CLOSED_OPERATION_STATUSES;
  const live = operations.filter((o) => !closed.includes(o.status));
  const unclosed = alerts.filter((a) => UNCLOSED.includes(a.status));
  const openRisks = operatorRisks.filter((r) => OPEN_RISK_STATUSES.includes(r.status));
  const countOf = <T>(items: readonly T[], test: (item: T) => boolean) => items.filter(test).length;

  const internalCodes =
    taxonomies.find((d) => d.dimension === "internal_status")?.values.map((v) => v.code) ?? [];
  const watchlist = live
    .filter((o) => WATCHED.includes(o.statut_interne ?? ""))
    .sort((a, b) => (encoursOf(b) > encoursOf(a) ? 1 : encoursOf(b) < encoursOf(a) ? -1 : 0));

  const covenants = countOf(unclosed, (a) => ["ltv_breach", "dscr_breach"].includes(a.alert_type));
  const criticalCovenants = countOf(
    unclosed,
    (a) => a.severity === "critical" && ["ltv_breach", "dscr_breach"].includes(a.alert_type),
  );
  const lateRepayments = countOf(unclosed, (a) => a.alert_type === "late_repayment");
  const badSirens = countOf(operators, (o) => o.siren !== null && !checkSiren(o.siren).valid);
  const litigation = countOf(operators, (o) => o.litiges_en_cours);
  const severeRisks = countOf(openRisks, (r) => r.level === "eleve" || r.level === "critique");
  const criticalRisks = countOf(openRisks, (r) => r.level === "critique");
  const overdueReviews = countOf(openRisks, (r) => r.review_date !== null && r.review_date < today);
  const lateReporting = countOf(live, (o) => o.reporting_summary.statut_reporting === "en_retard");
  const preLitigation = countOf(watchlist, (o) => o.statut_interne === "precontentieux");

  const controls: Control[] = [
    control(
      "covenants",
      "Respect des covenants financiers (LTV, DSCR)",
      covenants,
      criticalCovenants > 0 ? "non_conforme" : "a_surveiller",
      `${covenants} dépassement(s) non clos, dont ${criticalCovenants} critique(s).`,
    ),
    control(
      "remboursements",
      "Échéances de remboursement",
      lateRepayments,
      "non_conforme",
      `${lateRepayments} remboursement(s) en retard non régularisé(s).`,
    ),
    control(
      "identification_contreparties",
      "Identification des contreparties (SIREN)",
      badSirens,
      "non_conforme",
      `${badSirens} opérateur(s) dont la clé de contrôle du SIREN est fausse.`,
    ),
    control(
      "contentieux_operateurs",
      "Contentieux des opérateurs",
      litigation,
      "a_surveiller",
      `${litigation} opérateur(s) déclarent un contentieux en cours.`,
    ),
    control(
      "risques_tiers",
      "Risques tiers élevés ou critiques",
      severeRisks,
      criticalRisks > 0 ? "non_conforme" : "a_surveiller",
      `${severeRisks} risque(s) ouvert(s) élevé(s) ou critique(s), dont ${criticalRisks} critique(s).`,
    ),
    control(
      "revues_risques",
      "Revues des risques tiers à date",
      overdueReviews,
      "a_surveiller",
      `${overdueReviews} risque(s) ouvert(s) dont la date de revue est passée.`,
    ),
    control(
      "reportings",
      "Remise des reportings opérateurs",
      lateReporting,
      "a_surveiller",
      `${lateReporting} opération(s) en cours avec un reporting en retard.`,
    ),
    control(
      "operations_sensibles",
      "Opérations en alerte ou en précontentieux",
      watchlist.length,
      preLitigation > 0 ? "non_conforme" : "a_surveiller",
      `${watchlist.length} opération(s) en cours, dont ${preLitigation} en précontentieux.`,
    ),
  ];
  const rank = (c: Control) => CONTROL_STATUSES.length - 1 - CONTROL_STATUSES.indexOf(c.status);

  return {
    entity: { id: entity.id, name: entity.name },
    as_of: new Date(nowMs).toISOString(),
    controls: controls
      .map((c, i) => ({ c, i }))
      .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
      .map(({ c }) => c),
    operations: {
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
    },
    alerts: {
      unclosed: unclosed.length,
      by_severity: {
        critical: countOf(unclosed, (a) => a.severity === "critical"),
        warning: countOf(unclosed, (a) => a.severity === "warning"),
        info: countOf(unclosed, (a) => a.severity === "info"),
      },
    },
    operators: {
      total: operators.length,
      litigation,
      siren_invalid: badSirens,
      reputation_to_watch: countOf(
        operators,
        (o) => o.reputation_gouvernance_label === "À surveiller",
      ),
    },
    third_party_risks: {
      open: openRisks.length,
      by_level: {
        faible: countOf(openRisks, (r) => r.level === "faible"),
        modere: countOf(openRisks, (r) => r.level === "modere"),
        eleve: countOf(openRisks, (r) => r.level === "eleve"),
        critique: criticalRisks,
      },
    },
  };
}
