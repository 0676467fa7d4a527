import type { Operation } from "../models/operations.js";
import type { Repayment, StoredSchedule, StoredScheduleLine } from "../models/repayments.js";
import { fromCents, toCents } from "../money.js";
import { addDays } from "./documents.js";
import type { FamilySeed } from "./index.js";

export interface RepaymentsData {
  repaymentSchedules: StoredSchedule[];
  repayments: Repayment[];
}

/** Who records the payments matched on the bank statements. */
export const BANK_MATCHING = "rapprochement_bancaire";

/**
 * A schedule for every operation that has drawn funds (the demo data gives each a rate and a
 * maturity, equity included, and the alerts read a passed maturity as a late repayment):
 * interest every quarter from the investment date, principal in fine at maturity (after a
 * partial amortisation where the operation has already repaid part), cut at the repayment for
 * closed operations. Every line due before today is paid by a confirmed repayment, except where
 * the data says otherwise: the latest interest of an operation with a "late interest"
 * notification, and the principal of a live operation past its maturity, are late. A few
 * payments announced by the operators await the bank's confirmation; one transfer came back
 * rejected.
 */
export const seedRepayments: FamilySeed<RepaymentsData> = {
  family: "repayments",
  seed(data, { random, at, past, today }) {
    const lateInterest = new Set(
      data.notifications
        .filter((n) => n.title.startsWith("Retard de paiement des intérêts"))
        .map((n) => n.operation_id),
    );
    const repaymentSchedules: StoredSchedule[] = [];
    const repayments: Repayment[] = [];
    for (const operation of data.operations) {
      const lines = scheduleLines(operation, random, today);
      if (lines.length === 0) continue;
      const created = operation.created_at;
      repaymentSchedules.push({
        operation_id: operation.id,
        version: 1,
        lines,
        updated_at: created,
        updated_by: BANK_MATCHING,
      });
      const fallenDue = lines.filter((l) => l.due_date < today);
      const lastInterest = unpaidInterestLine(lines, today);
      let pendingAdded = false;
      for (const line of fallenDue) {
        const unpaidInterest = line === lastInterest && lateInterest.has(operation.id);
        const unpaidPrincipal =
          line.kind === "remboursement_final" && operation.phase !== "terminee";
        const total = lineTotal(line);
        if (unpaidInterest || unpaidPrincipal) {
          // An operator that announced a transfer to cure the first late line of its operation.
          if (!pendingAdded && unpaidInterest && random.chance(0.7)) {
            pendingAdded = true;
            repayments.push(
              record(
                random.uuid(),
                operation,
                line,
                total,
                addDays(today, -1),
                "pending",
                at(-1, 120),
              ),
            );
          }
          continue;
        }
        // Paid on the due date or a few days after, but not after today: recorded the morning
        // after, once the bank statement came, and no later than now.
        const paid = addDays(line.due_date, random.int(0, 3));
        const valueDate = paid < today ? paid : line.due_date;
        const recordedAt = past(`${addDays(valueDate, 1)}T07:30:00.000Z`);
        if (repayments.length % 37 === 5) {
          // A transfer the bank returned, paid again two days later.
          repayments.push({
            ...record(random.uuid(), operation, line, total, valueDate, "rejected", recordedAt),
            comment: "Virement retourné par la banque : coordonnées du bénéficiaire erronées.",
          });
        }
        repayments.push(
          record(random.uuid(), operation, line, total, valueDate, "confirmed", recordedAt),
        );
      }
    }
    return { repaymentSchedules, repayments };
  },
};

function record(
  id: string,
  operation: Operation,
  line: StoredScheduleLine,
  amount: string,
  valueDate: string,
  status: Repayment["status"],
  recordedAt: string,
): Repayment {
  return {
    id,
    operation_id: operation.id,
    schedule_line_id: line.id,
    amount,
    value_date: valueDate,
    reference: `VIR-${valueDate.replaceAll("-", "")}-${id.slice(0, 6).toUpperCase()}`,
    comment: status === "pending" ? "Virement annoncé par l'opérateur." : null,
    status,
    created_by: status === "pending" ? "portail_operateur" : BANK_MATCHING,
    created_at: recordedAt,
    updated_at: recordedAt,
    settled_at: status === "pending" ? null : recordedAt,
  };
}

function scheduleLines(
  operation: Operation,
  random: { uuid(): string },
  today: string,
): StoredScheduleLine[] {
  const f = operation.financial_summary;
  const called = toCents(f.montant_appele);
  const repaid = toCents(f.montant_rembourse);
  const rate = Number(f.taux_annuel);
  if (
    typeof f.date_investissement !== "string" ||
    typeof f.date_echeance !== "string" ||
    called <= 0n ||
    !Number.isFinite(rate)
  )
    return [];
  // Closed operations stopped at their repayment: no later than today.
  const end =
    operation.phase === "terminee" && f.date_echeance > today
      ? addDays(today, -30)
      : f.date_echeance;
  const quarterly = (BigInt(Math.round(rate * 100)) * called) / 40_000n;
  const lines: StoredScheduleLine[] = [];
  const start = f.date_investissement;
  for (let n = 1, due = addMonths(start, 3); due < end; n++, due = addMonths(start, 3 * n)) {
    lines.push({
      id: random.uuid(),
      due_date: due,
      kind: "interets",
      principal: "0.00",
      interest: fromCents(quarterly),
    });
  }
  // A partial amortisation already repaid (deliveries): the lots sold paid part of the debt.
  const amortised = lines.findLast((l) => l.due_date < today);
  const partial = repaid > 0n && repaid < called && amortised !== undefined;
  if (partial) Object.assign(amortised, { kind: "amortissement", principal: fromCents(repaid) });
  lines.push({
    id: random.uuid(),
    due_date: end,
    kind: "remboursement_final",
    principal: fromCents(partial ? called - repaid : called),
    interest: fromCents(quarterly),
  });
  return lines;
}

/**
 * The interest line left unpaid where an operation has a "late interest" notification: the
 * latest that fell due. The alert about it names this line and its amount.
 */
export function unpaidInterestLine(
  lines: readonly StoredScheduleLine[],
  today: string,
): StoredScheduleLine | undefined {
  return lines.filter((l) => l.due_date < today).findLast((l) => l.kind === "interets");
}

/** What a schedule line asks for in all: its principal and its interest. */
export const lineTotal = (line: StoredScheduleLine): string =>
  fromCents(toCents(line.principal) + toCents(line.interest));

/** `2025-01-31` plus one month is `2025-02-28`: the day is kept where the month has it. */
export function addMonths(day: string, months: number): string {
  const [year = 0, month = 1, date = 1] = day.split("-").map(Number);
  const target = new Date(Date.UTC(year, month - 1 + months, 1));
  const last = new Date(
    Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0),
  ).getUTCDate();
  target.setUTCDate(Math.min(date, last));
  return target.toISOString().slice(0, 10);
}
