import { randomUUID } from "node:crypto";
import { z } from "zod";
import { businessDate } from "../clock.js";
import { addMonths } from "../data/repayments.js";
import { serviceAccount } from "../keys.js";
import { date } from "../models/common.js";
import {
  amountInput,
  LINE_KINDS,
  type LineStatus,
  REPAYMENT_STATUSES,
  type Repayment,
  type RepaymentScheduleView,
  type RepaymentStatus,
  repaymentListSchema,
  repaymentScheduleSchema,
  repaymentSchema,
  type StoredScheduleLine,
} from "../models/repayments.js";
import { fromCents, toCents } from "../money.js";
import { type FieldError, invalid, notFound, Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { uuid } from "../validation.js";
import { page, pageQuery } from "./pagination.js";

type Move = "confirm" | "reject";

/** A repayment is pending until the bank confirms or rejects it; then it is settled for good. */
export const REPAYMENT_MOVES: Transitions<RepaymentStatus, Move> = {
  confirm: ["pending"],
  reject: ["pending"],
};
const MOVE_OF: Record<Exclude<RepaymentStatus, "pending">, Move> = {
  confirmed: "confirm",
  rejected: "reject",
};

const DAY_MS = 86_400_000;

/**
 * An operation's schedule as of `today`: each line's paid amount (confirmed repayments
 * allocated to it), what remains, and due / paid / late. Late is unpaid with a due date before
 * today, the sandbox's business date. Operations without a schedule answer an empty one.
 */
export function scheduleView(
  state: SandboxState,
  operationId: string,
  today: string,
): RepaymentScheduleView {
  const stored = state.data.repaymentSchedules.find((s) => s.operation_id === operationId);
  const confirmed = state.data.repayments.filter(
    (r) => r.operation_id === operationId && r.status === "confirmed",
  );
  const sum = { principal: 0n, interest: 0n, total: 0n, paid: 0n, remaining: 0n, late: 0n };
  const lines = (stored?.lines ?? []).map((line) => {
    const payments = confirmed.filter((r) => r.schedule_line_id === line.id);
    const total = toCents(line.principal) + toCents(line.interest);
    const paid = payments.reduce((n, r) => n + toCents(r.amount), 0n);
    const remaining = paid >= total ? 0n : total - paid;
    const status: LineStatus = remaining === 0n ? "paid" : line.due_date < today ? "late" : "due";
    sum.principal += toCents(line.principal);
    sum.interest += toCents(line.interest);
    sum.total += total;
    sum.paid += paid;
    sum.remaining += remaining;
    if (status === "late") sum.late += remaining;
    return {
      ...line,
      total: fromCents(total),
      paid: fromCents(paid),
      remaining: fromCents(remaining),
      status,
      paid_on:
        status === "paid"
          ? (payments
              .map((r) => r.value_date)
              .sort()
              .at(-1) ?? null)
          : null,
      days_late:
        status === "late"
          ? Math.round((Date.parse(today) - Date.parse(line.due_date)) / DAY_MS)
          : null,
    };
  });
  return {
    operation_id: operationId,
    currency: "EUR",
    version: stored?.version ?? 0,
    as_of: today,
    lines,
    totals: Object.fromEntries(
      Object.entries(sum).map(([k, v]) => [k, fromCents(v)]),
    ) as RepaymentScheduleView["totals"],
    next_due_date: lines.find((l) => l.status === "due")?.due_date ?? null,
    updated_at: stored?.updated_at ?? null,
    updated_by: stored?.updated_by ?? null,
  };
}

const operationParams = z.strictObject({ operation_id: uuid });

const scheduleBody = z.strictObject({
  lines: z
    .array(
      z.strictObject({
        due_date: date,
        kind: z.enum(LINE_KINDS),
        principal: amountInput,
        interest: amountInput,
      }),
    )
    .max(240),
  /** The version the caller read: a stale one is refused (409), so no change is lost. */
  expected_version: z.int().min(0).optional(),
});

/**
 * The lines a PUT sends, checked: due dates once each, something due on each line. A line keeps
 * its id when its due date stays; a line with repayments must stay, and owe no less than what
 * was paid on it.
 */
function replaceLines(
  state: SandboxState,
  operationId: string,
  current: readonly StoredScheduleLine[],
  lines: z.output<typeof scheduleBody>["lines"],
): StoredScheduleLine[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  lines.forEach((line, i) => {
    if (seen.has(line.due_date))
      errors.push({ field: `lines[${i}].due_date`, rule: "unique", message: "is given twice" });
    seen.add(line.due_date);
    if (toCents(line.principal) + toCents(line.interest) === 0n)
      errors.push({ field: `lines[${i}]`, rule: "total > 0", message: "has nothing due" });
  });
  if (errors.length > 0) throw invalid(errors);
  const next = [...lines]
    .sort((a, b) => a.due_date.localeCompare(b.due_date))
    .map((line) => ({
      id: current.find((c) => c.due_date === line.due_date)?.id ?? randomUUID(),
      due_date: line.due_date,
      kind: line.kind,
      principal: fromCents(toCents(line.principal)),
      interest: fromCents(toCents(line.interest)),
    }));
  for (const old of current) {
    const recorded = state.data.repayments.filter(
      (r) =>
        r.operation_id === operationId && r.schedule_line_id === old.id && r.status !== "rejected",
    );
    if (recorded.length === 0) continue;
    const kept = next.find((l) => l.id === old.id);
    const paid = recorded.reduce((n, r) => n + toCents(r.amount), 0n);
    if (!kept || toCents(kept.principal) + toCents(kept.interest) < paid) {
      throw new Problem(
        409,
        `The line due ${old.due_date} has ${fromCents(paid)} EUR of repayments recorded: keep it, owing at least that much.`,
        { reasonCode: "schedule_line_has_repayments" },
      );
    }
  }
  return next;
}

function findRepayment(state: SandboxState, operationId: string, id: string): Repayment {
  const repayment = state.data.repayments.find(
    (r) => r.id === id.toLowerCase() && r.operation_id === operationId,
  );
  if (!repayment) throw notFound("repayment", id, "repayment_not_found");
  return repayment;
}

/**
 * A repayment allocated to a line may not bring what is recorded on it (confirmed and
 * pending) beyond what the line owes: 422 naming the amount.
 */
function checkAllocation(
  state: SandboxState,
  operationId: string,
  lineId: string | null,
  amount: string,
  ignore: string | null,
): void {
  if (lineId === null) return;
  const line = state.data.repaymentSchedules
    .find((s) => s.operation_id === operationId)
    ?.lines.find((l) => l.id === lineId);
  if (!line) {
    throw invalid(
      [
        {
          field: "schedule_line_id",
          rule: "line of this operation's schedule",
          message: "names no line of the schedule",
        },
      ],
      "reference_not_found",
    );
  }
  const recorded = state.data.repayments
    .filter((r) => r.schedule_line_id === lineId && r.status !== "rejected" && r.id !== ignore)
    .reduce((n, r) => n + toCents(r.amount), 0n);
  const owed = toCents(line.principal) + toCents(line.interest) - recorded;
  if (toCents(amount) > owed) {
    throw invalid(
      [
        {
          field: "amount",
          rule: `at most ${fromCents(owed > 0n ? owed : 0n)}`,
          message: `exceeds what remains due on the line of ${line.due_date}`,
        },
      ],
      "amount_exceeds_due",
    );
  }
}

function checkValueDate(valueDate: string | undefined, today: string): void {
  if (valueDate !== undefined && valueDate > today) {
    throw invalid([
      { field: "value_date", rule: `at most ${today}`, message: "must not be in the future" },
    ]);
  }
}

const positiveAmount = amountInput.refine((a) => toCents(a) > 0n, "must be more than 0");

/** For the contract walk: an operation whose schedule has a line still owing something. */
function owingLine(state: SandboxState) {
  for (const schedule of state.data.repaymentSchedules) {
    const line = schedule.lines.find(
      (l) => !state.data.repayments.some((r) => r.schedule_line_id === l.id),
    );
    if (line) return { schedule, line };
  }
  return null;
}

export const repaymentRoutes = [
  defineRoute({
    id: "repayment_schedule_get",
    family: "repayments",
    method: "GET",
    path: "/operations/{operation_id}/repayment-schedule",
    scope: "operations:read",
    kind: "read",
    summary: "Get an operation's repayment schedule: due, paid, late",
    description:
      "Each line with what was paid on it (confirmed repayments) and its status as of the sandbox's business date: paid, due, or late (unpaid, due before today). An operation without a schedule answers an empty one (version 0).",
    params: operationParams,
    response: { status: 200, schema: repaymentScheduleSchema },
    refusals: { 404: ["operation_not_found"] },
    handle({ params, state, now }) {
      const operation = state.operation(params.operation_id);
      return json(scheduleView(state, operation.id, businessDate(now())));
    },
  }),
  defineRoute({
    id: "repayment_schedule_put",
    family: "repayments",
    method: "PUT",
    path: "/operations/{operation_id}/repayment-schedule",
    scope: "operations:write",
    kind: "write",
    summary: "Replace an operation's repayment schedule",
    description:
      "The whole schedule, line by line. A line keeps its id when its due date stays; a line with repayments recorded must stay and owe at least what was paid (409 `schedule_line_has_repayments`). With `expected_version`, a schedule changed since is refused (409 `version_conflict`).",
    params: operationParams,
    body: scheduleBody,
    response: { status: 200, schema: repaymentScheduleSchema },
    refusals: {
      404: ["operation_not_found"],
      409: ["version_conflict", "schedule_line_has_repayments"],
    },
    example: ({ state, today }) => {
      // An operation without a schedule yet (sourcing, equity): its first schedule.
      const operation = state.data.operations.find(
        (o) => !state.data.repaymentSchedules.some((s) => s.operation_id === o.id),
      );
      return operation
        ? {
            params: { operation_id: operation.id },
            body: {
              lines: [
                {
                  due_date: addMonths(today, 3),
                  kind: "interets",
                  principal: "0.00",
                  interest: "12500.00",
                },
                {
                  due_date: addMonths(today, 24),
                  kind: "remboursement_final",
                  principal: "1000000.00",
                  interest: "12500.00",
                },
              ],
              expected_version: 0,
            },
          }
        : {};
    },
    handle({ params, body, state, key, now }) {
      const operation = state.operation(params.operation_id);
      const stored = state.data.repaymentSchedules.find((s) => s.operation_id === operation.id);
      const version = stored?.version ?? 0;
      if (body.expected_version !== undefined && body.expected_version !== version) {
        throw new Problem(
          409,
          `The schedule is at version ${version}, not ${body.expected_version}: read it again before replacing it.`,
          { reasonCode: "version_conflict" },
        );
      }
      const lines = replaceLines(state, operation.id, stored?.lines ?? [], body.lines);
      const at = new Date(now()).toISOString();
      const next = {
        operation_id: operation.id,
        version: version + 1,
        lines,
        updated_at: at,
        updated_by: serviceAccount(key),
      };
      if (stored) Object.assign(stored, next);
      else state.data.repaymentSchedules.push(next);
      return json(scheduleView(state, operation.id, businessDate(now())));
    },
  }),
  defineRoute({
    id: "repayments_list",
    family: "repayments",
    method: "GET",
    path: "/operations/{operation_id}/repayments",
    scope: "operations:read",
    kind: "read",
    summary: "List an operation's repayments, latest value date first",
    params: operationParams,
    query: z.strictObject({
      status: z.enum(REPAYMENT_STATUSES).optional(),
      ...pageQuery(200, 50),
    }),
    response: { status: 200, schema: repaymentListSchema },
    refusals: { 404: ["operation_not_found"] },
    handle({ params, query, state }) {
      const operation = state.operation(params.operation_id);
      const repayments = state.data.repayments
        .filter(
          (r) =>
            r.operation_id === operation.id &&
            (query.status === undefined || r.status === query.status),
        )
        .sort(
          (a, b) =>
            b.value_date.localeCompare(a.value_date) ||
            b.created_at.localeCompare(a.created_at) ||
            a.id.localeCompare(b.id),
        );
      return json(page(repayments, query));
    },
  }),
  defineRoute({
    id: "repayment_create",
    family: "repayments",
    method: "POST",
    path: "/operations/{operation_id}/repayments",
    scope: "operations:write",
    kind: "write",
    summary: "Record a repayment (pending until the bank confirms it)",
    description:
      "`value_date` is today or before. Allocated to a schedule line, the amount may not exceed what remains due on it, pending repayments included (422 `amount_exceeds_due`). It counts as paid once confirmed (PATCH `status`).",
    params: operationParams,
    body: z.strictObject({
      amount: positiveAmount,
      value_date: date,
      schedule_line_id: uuid.nullable().optional(),
      reference: z.string().trim().min(1).max(100).nullable().optional(),
      comment: z.string().max(2000).nullable().optional(),
    }),
    response: { status: 201, schema: repaymentSchema },
    refusals: { 404: ["operation_not_found"], 422: ["amount_exceeds_due", "reference_not_found"] },
    example: ({ state, today }) => {
      const owing = owingLine(state);
      return owing
        ? {
            params: { operation_id: owing.schedule.operation_id },
            body: {
              amount: owing.line.interest === "0.00" ? owing.line.principal : owing.line.interest,
              value_date: today,
              schedule_line_id: owing.line.id,
              reference: "VIR-CONTRAT-0001",
            },
          }
        : {};
    },
    handle({ params, body, state, key, now }) {
      const operation = state.operation(params.operation_id);
      const today = businessDate(now());
      checkValueDate(body.value_date, today);
      const lineId = body.schedule_line_id?.toLowerCase() ?? null;
      checkAllocation(state, operation.id, lineId, body.amount, null);
      const at = new Date(now()).toISOString();
      const repayment: Repayment = {
        id: randomUUID(),
        operation_id: operation.id,
        schedule_line_id: lineId,
        amount: fromCents(toCents(body.amount)),
        value_date: body.value_date,
        reference: body.reference ?? null,
        comment: body.comment ?? null,
        status: "pending",
        created_by: serviceAccount(key),
        created_at: at,
        updated_at: at,
        settled_at: null,
      };
      state.data.repayments.push(repayment);
      return json(repayment, 201);
    },
  }),
  defineRoute({
    id: "repayment_update",
    family: "repayments",
    method: "PATCH",
    path: "/operations/{operation_id}/repayments/{repayment_id}",
    scope: "operations:write",
    kind: "write",
    summary: "Change a pending repayment, or confirm or reject it",
    description:
      "`status` confirmed or rejected settles a pending repayment for good (409 `invalid_transition` otherwise). Other fields change only while it is pending (409 `repayment_settled`); absent fields are left as they are, null clears `schedule_line_id`, `reference`, `comment`.",
    params: z.strictObject({ operation_id: uuid, repayment_id: uuid }),
    body: z.strictObject({
      status: z.enum(["confirmed", "rejected"]).optional(),
      amount: positiveAmount.optional(),
      value_date: date.optional(),
      schedule_line_id: uuid.nullable().optional(),
      reference: z.string().trim().min(1).max(100).nullable().optional(),
      comment: z.string().max(2000).nullable().optional(),
    }),
    response: { status: 200, schema: repaymentSchema },
    refusals: {
      404: ["operation_not_found", "repayment_not_found"],
      409: ["invalid_transition", "repayment_settled"],
      422: ["amount_exceeds_due", "reference_not_found"],
    },
    example: ({ state }) => {
      const pending = state.data.repayments.find((r) => r.status === "pending");
      return pending
        ? {
            params: { operation_id: pending.operation_id, repayment_id: pending.id },
            body: { status: "confirmed", comment: "Confirmé sur le relevé bancaire." },
          }
        : {};
    },
    handle({ params, body, state, now }) {
      const operation = state.operation(params.operation_id);
      const repayment = findRepayment(state, operation.id, params.repayment_id);
      const { status, ...fields } = body;
      const changes = Object.entries(fields).filter(([, v]) => v !== undefined);
      if (changes.length === 0 && status === undefined) {
        throw invalid([
          { field: "body", rule: "min 1 field", message: "send at least one field to change" },
        ]);
      }
      if (status !== undefined)
        assertTransition(
          REPAYMENT_MOVES,
          MOVE_OF[status],
          repayment.status,
          `Repayment ${repayment.id}`,
        );
      const editable = ["comment"];
      if (repayment.status !== "pending" && changes.some(([k]) => !editable.includes(k))) {
        throw new Problem(
          409,
          `Repayment ${repayment.id} is ${repayment.status}: only its comment may change; record a new repayment to correct it.`,
          { reasonCode: "repayment_settled" },
        );
      }
      checkValueDate(fields.value_date, businessDate(now()));
      const lineId =
        fields.schedule_line_id === undefined
          ? repayment.schedule_line_id
          : (fields.schedule_line_id?.toLowerCase() ?? null);
      if (status !== "rejected")
        checkAllocation(
          state,
          operation.id,
          lineId,
          fields.amount ?? repayment.amount,
          repayment.id,
        );
      const at = new Date(now()).toISOString();
      Object.assign(repayment, Object.fromEntries(changes), {
        schedule_line_id: lineId,
        ...(fields.amount !== undefined ? { amount: fromCents(toCents(fields.amount)) } : {}),
        ...(status !== undefined ? { status, settled_at: at } : {}),
        updated_at: at,
      });
      return json(repayment);
    },
  }),
];
