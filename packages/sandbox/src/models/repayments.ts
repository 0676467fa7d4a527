import { z } from "zod";
import { component, date, dateTime, decimal, pageOf, uuid } from "./common.js";

/** Repayments: fields not shown by the spec, the sandbox's choice (README). Amounts in EUR. */

/** An amount sent to the sandbox: decimal string, not negative, at most two decimals. */
export const amountInput = z
  .string()
  .regex(/^\d{1,13}(\.\d{1,2})?$/, "must be an amount as a decimal string with at most 2 decimals");

export const LINE_KINDS = ["interets", "amortissement", "remboursement_final"] as const;
/** Spec's due / paid / late, from the sandbox's business date: late is due before today, unpaid. */
export const LINE_STATUSES = ["due", "paid", "late"] as const;
export type LineStatus = (typeof LINE_STATUSES)[number];

export const REPAYMENT_STATUSES = ["pending", "confirmed", "rejected"] as const;
export type RepaymentStatus = (typeof REPAYMENT_STATUSES)[number];

/** A line of a schedule as stored: what is due and when. */
export interface StoredScheduleLine {
  id: string;
  due_date: string;
  kind: (typeof LINE_KINDS)[number];
  principal: string;
  interest: string;
}

export interface StoredSchedule {
  operation_id: string;
  version: number;
  lines: StoredScheduleLine[];
  updated_at: string;
  updated_by: string;
}

export const scheduleLineSchema = z.object({
  id: uuid,
  due_date: date,
  kind: z.enum(LINE_KINDS),
  principal: decimal,
  interest: decimal,
  total: decimal,
  /** Confirmed repayments allocated to the line; pending ones do not count yet. */
  paid: decimal,
  remaining: decimal,
  status: z.enum(LINE_STATUSES),
  /** Value date of the repayment that settled the line. */
  paid_on: date.nullable(),
  days_late: z.int().min(1).nullable(),
});

const totals = z.object({
  principal: decimal,
  interest: decimal,
  total: decimal,
  paid: decimal,
  remaining: decimal,
  late: decimal,
});

export const repaymentScheduleSchema = component(
  "RepaymentSchedule",
  z.object({
    operation_id: uuid,
    currency: z.literal("EUR"),
    /** 0 for an operation without a schedule (equity, not yet invested); +1 on each PUT. */
    version: z.int().min(0),
    /** The business date `late` was computed for. */
    as_of: date,
    lines: z.array(scheduleLineSchema),
    totals,
    next_due_date: date.nullable(),
    updated_at: dateTime.nullable(),
    updated_by: z.string().nullable(),
  }),
);
export type RepaymentScheduleView = z.output<typeof repaymentScheduleSchema>;

export const repaymentSchema = component(
  "Repayment",
  z.object({
    id: uuid,
    operation_id: uuid,
    /** The schedule line the payment settles, if allocated. */
    schedule_line_id: uuid.nullable(),
    amount: decimal,
    value_date: date,
    reference: z.string().nullable(),
    comment: z.string().nullable(),
    /** pending until the bank confirms it; confirmed or rejected for good. */
    status: z.enum(REPAYMENT_STATUSES),
    created_by: z.string(),
    created_at: dateTime,
    updated_at: dateTime,
    settled_at: dateTime.nullable(),
  }),
);
export type Repayment = z.output<typeof repaymentSchema>;

export const repaymentListSchema = component("RepaymentList", pageOf(repaymentSchema));
