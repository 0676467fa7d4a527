import { frenchDate, frenchEuros } from "../french.js";
import type { Alert, AlertMove, AlertStatus, Notification, Severity } from "../models/alerts.js";
import type { CalendarEvent } from "../models/calendar.js";
import type { Operation } from "../models/operations.js";
import { DEMO_USERS, type DemoData } from "./demo.js";
import type { FamilySeed, SeedContext } from "./index.js";
import { lineTotal, type RepaymentsData, unpaidInterestLine } from "./repayments.js";
import { CLOSED_OPERATION_STATUSES } from "./taxonomies.js";

export interface AlertsData {
  alerts: Alert[];
}

/** The alert behind each kind of seeded notification, by the notification's title. */
const NOTIFICATION_ALERTS: Record<string, { type: string; severity: Severity }> = {
  "Covenant LTV dépassé": { type: "ltv_breach", severity: "critical" },
  "Retard de paiement des intérêts": { type: "late_interest_payment", severity: "critical" },
  "Reporting trimestriel en retard": { type: "reporting_overdue", severity: "warning" },
  "Dépassement du budget travaux": { type: "budget_overrun", severity: "warning" },
};

/** The alert a calendar proposal (source `alert`) was derived from, by the event's type. */
const PROPOSAL_ALERTS: Record<string, { type: string; severity: Severity; title: string }> = {
  covenant_deadline: {
    type: "covenant_deadline",
    severity: "warning",
    title: "Test de covenant à préparer",
  },
  reporting_due: {
    type: "reporting_due",
    severity: "info",
    title: "Reporting trimestriel attendu",
  },
  echeance: {
    type: "maturity_approaching",
    severity: "warning",
    title: "Échéance de remboursement proche",
  },
  ag_date: { type: "general_meeting", severity: "info", title: "Assemblée générale à convoquer" },
  visite_chantier: {
    type: "construction_delay",
    severity: "warning",
    title: "Retard de chantier signalé",
  },
  custom: { type: "operator_follow_up", severity: "info", title: "Point opérateur à planifier" },
};

const LTV_COVENANT = 55;
const DSCR_FLOOR = 0.85;
const REVIEWERS = [DEMO_USERS.camille, DEMO_USERS.thomas];

/**
 * Alerts on named operations, consistent with the rest of the data: one behind each warning or
 * critical notification, LTV and DSCR breaches read from the KPI snapshots, repayments past
 * their maturity, and the alerts the calendar's proposals came from. Open critical alerts have
 * an unread critical notification, which drives `has_critical`.
 */
export const seedAlerts: FamilySeed<AlertsData> = {
  family: "alerts",
  seed(data, context) {
    const { random, at, today } = context;
    const byId = new Map(data.operations.map((o) => [o.id, o]));
    const scheduleOf = (operationId: string) =>
      (data as Partial<RepaymentsData>).repaymentSchedules?.find(
        (s) => s.operation_id === operationId,
      )?.lines ?? [];
    const alerts: Alert[] = [];
    const seen = new Map<string, Alert>();
    const add = (draft: Draft): Alert => {
      const dedupe = `${draft.operation?.id ?? draft.spvId}:${draft.type}`;
      const existing = seen.get(dedupe);
      if (existing) return existing;
      const alert = buildAlert(draft, data, context);
      seen.set(dedupe, alert);
      alerts.push(alert);
      return alert;
    };

    // 1. Behind each warning or critical notification; its read state says whether it was seen.
    // Unread ones first: an alert two notifications share stays open while one is unread.
    const unreadFirst = [...data.notifications].sort((a, b) => Number(a.read) - Number(b.read));
    for (const notification of unreadFirst) {
      const kind = NOTIFICATION_ALERTS[notification.title.split(" – ")[0] ?? ""];
      const operation = notification.operation_id ? byId.get(notification.operation_id) : undefined;
      if (!kind || !operation) continue;
      const ltv = Number(operation.kpi_snapshot.ltv);
      // Late interest: the schedule's line left unpaid (repayments.ts), by its date and amount.
      const unpaid =
        kind.type === "late_interest_payment"
          ? unpaidInterestLine(scheduleOf(operation.id), today)
          : undefined;
      const alert = add({
        type: kind.type,
        severity: kind.severity,
        title: notification.title,
        description: unpaid
          ? `Intérêts de l'échéance du ${frenchDate(unpaid.due_date)} impayés ; ${frenchEuros(lineTotal(unpaid))} restent dus.`
          : null,
        operation,
        metric:
          kind.type === "ltv_breach" && Number.isFinite(ltv)
            ? ltvMetric(ltv, Math.max(1, Math.floor(ltv) - random.int(1, 4)))
            : null,
        dueDate: unpaid?.due_date ?? null,
        detectedAt: notification.created_at,
        status: notification.read ? random.pick(["acknowledged", "resolved"] as const) : "open",
      });
      notification.alert_id = alert.id;
    }

    const live = data.operations.filter(
      (o) =>
        o.status !== "sourcing" &&
        !(CLOSED_OPERATION_STATUSES as readonly string[]).includes(o.status),
    );
    // Rule-based alerts go round the lifecycle, so that every state is seeded.
    const lifecycle: AlertStatus[] = [
      "open",
      "postponed",
      "acknowledged",
      "false_positive",
      "resolved",
    ];
    let turn = 0;
    const settled = (): AlertStatus => lifecycle[turn++ % lifecycle.length] ?? "open";

    // 2. Covenant breaches read from the KPI snapshots.
    for (const operation of live) {
      const ltv = Number(operation.kpi_snapshot.ltv);
      if (ltv > LTV_COVENANT) {
        add({
          type: "ltv_breach",
          severity: "critical",
          title: `Covenant LTV dépassé – ${operation.name}`,
          description: `LTV de ${frenchDecimal(ltv)} % pour un covenant à ${LTV_COVENANT},00 %.`,
          operation,
          metric: ltvMetric(ltv, LTV_COVENANT),
          dueDate: null,
          detectedAt: at(-random.int(1, 20), random.int(0, 600)),
          status: "open",
        });
      }
      const dscr = operation.kpi_snapshot.dscr;
      if (typeof dscr === "number" && dscr < DSCR_FLOOR) {
        add({
          type: "dscr_breach",
          severity: "warning",
          title: `DSCR sous le seuil – ${operation.name}`,
          description: `DSCR de ${frenchDecimal(dscr)} pour un plancher de 1,00.`,
          operation,
          metric: { name: "dscr", value: dscr.toFixed(2), threshold: "1.00", unit: "x" },
          dueDate: null,
          detectedAt: at(-random.int(1, 30), random.int(0, 600)),
          status: settled(),
        });
      }
    }

    // 3. Repayments past their maturity with an outstanding amount: what the schedule's final
    // line asks (principal and last interest), as the schedule and the timeline say it.
    for (const operation of live) {
      const maturity = operation.financial_summary.date_echeance;
      const outstanding = Number(operation.financial_summary.encours);
      if (typeof maturity !== "string" || maturity >= today || !(outstanding > 0)) continue;
      const final = scheduleOf(operation.id).find(
        (l) => l.kind === "remboursement_final" && l.due_date === maturity,
      );
      const due = final ? lineTotal(final) : String(operation.financial_summary.encours);
      add({
        type: "late_repayment",
        severity: "critical",
        title: `Remboursement en retard – ${operation.name}`,
        description: `Échéance du ${frenchDate(maturity)} impayée ; ${frenchEuros(due)} restent dus.`,
        operation,
        metric: null,
        dueDate: maturity,
        detectedAt: at(-random.int(1, 10), random.int(0, 600)),
        status: settled(),
      });
    }

    // 4. The alerts the calendar's proposals were derived from (source `alert`).
    for (const event of data.calendarEvents) {
      if (event.source !== "alert") continue;
      const kind = PROPOSAL_ALERTS[event.event_type] ?? PROPOSAL_ALERTS.custom!;
      const operation = event.operation_id ? byId.get(event.operation_id) : undefined;
      const alert = add({
        type: kind.type,
        severity: kind.severity,
        title: `${kind.title} – ${operation?.name ?? spvName(data, event)}`,
        description: event.description ?? null,
        operation,
        spvId: event.spv_id ?? null,
        metric: null,
        dueDate: event.event_date,
        detectedAt: event.created_at,
        status: event.accepted === null ? "open" : "acknowledged",
      });
      event.source_alert_id = alert.id;
    }

    // Every warning or critical alert has its notification: unread while the alert is open.
    for (const alert of alerts) {
      if (alert.severity === "info" || data.notifications.some((n) => n.alert_id === alert.id))
        continue;
      const read = alert.status !== "open";
      data.notifications.push({
        id: random.uuid(),
        title: alert.title,
        severity: alert.severity,
        read,
        read_at: read ? alert.updated_at : null,
        operation_id: alert.operation_id,
        alert_id: alert.id,
        created_at: alert.detected_at,
      } satisfies Notification);
    }
    return { alerts };
  },
};

interface Draft {
  type: string;
  severity: Severity;
  title: string;
  description: string | null;
  operation: Operation | undefined;
  spvId?: string | null;
  metric: Alert["metric"];
  dueDate: string | null;
  detectedAt: string;
  status: AlertStatus;
}

/** An alert detected at `detectedAt`, then moved once by a reviewer if not open. */
function buildAlert(draft: Draft, data: DemoData, { random, at, day }: SeedContext): Alert {
  const { operation } = draft;
  const spvId = operation?.spv_id ?? draft.spvId ?? null;
  const history: AlertMove[] = [
    { from: null, to: "open", at: draft.detectedAt, by: "system", comment: null },
  ];
  const reviewer = random.pick(REVIEWERS);
  // Reviewed a few hours after detection, and never in the future.
  const reviewedAt = new Date(
    Math.min(Date.parse(draft.detectedAt) + random.int(2, 30) * 3_600_000, Date.parse(at(0))),
  ).toISOString();
  if (draft.status !== "open") {
    history.push({
      from: "open",
      to: draft.status,
      at: reviewedAt,
      by: reviewer,
      comment: SEED_COMMENTS[draft.status],
    });
  }
  const closed = draft.status === "resolved" || draft.status === "false_positive";
  return {
    id: random.uuid(),
    alert_type: draft.type,
    severity: draft.severity,
    status: draft.status,
    title: draft.title,
    description: draft.description,
    operation_id: operation?.id ?? null,
    operateur_id: operation?.operateur_id ?? null,
    spv_id: spvId,
    fond_id: operation?.fond_id ?? data.spvs.find((s) => s.id === spvId)?.fond_id ?? null,
    metric: draft.metric,
    due_date: draft.dueDate,
    postponed_until: draft.status === "postponed" ? day(random.int(5, 45)) : null,
    detected_at: draft.detectedAt,
    acknowledged_at: draft.status === "acknowledged" ? reviewedAt : null,
    acknowledged_by: draft.status === "acknowledged" ? reviewer : null,
    closed_at: closed ? reviewedAt : null,
    closed_by: closed ? reviewer : null,
    history,
    created_at: draft.detectedAt,
    updated_at: history.at(-1)?.at ?? draft.detectedAt,
  };
}

const SEED_COMMENTS: Record<AlertStatus, string | null> = {
  open: null,
  acknowledged: "Pris en compte, point prévu avec l'opérateur.",
  postponed: "À revoir après réception du prochain reporting.",
  resolved: "Situation régularisée, justificatifs versés au dossier.",
  false_positive: "Donnée source erronée, corrigée dans le reporting.",
};

function ltvMetric(value: number, threshold: number): Alert["metric"] {
  return { name: "ltv", value: value.toFixed(2), threshold: threshold.toFixed(2), unit: "%" };
}

function frenchDecimal(value: number): string {
  return value.toFixed(2).replace(".", ",");
}

function spvName(data: DemoData, event: CalendarEvent): string {
  return data.spvs.find((s) => s.id === event.spv_id)?.name ?? data.entity.name;
}
