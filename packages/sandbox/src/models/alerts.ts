import { z } from "zod";
import { component, date, dateTime, decimal, uuid } from "./common.js";

/** Alerts and notifications: fields beyond the unread count are not shown (README). */

export const SEVERITIES = ["info", "warning", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const ALERT_STATUSES = [
  "open",
  "acknowledged",
  "postponed",
  "resolved",
  "false_positive",
] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

const alertMoveSchema = z.object({
  from: z.enum(ALERT_STATUSES).nullable(),
  to: z.enum(ALERT_STATUSES),
  at: dateTime,
  by: z.string(),
  comment: z.string().nullable(),
});
export type AlertMove = z.output<typeof alertMoveSchema>;

export const alertSchema = component(
  "Alert",
  z.object({
    id: uuid,
    /** Open list: ltv_breach, dscr_breach, late_repayment, covenant_deadline, ... */
    alert_type: z.string().max(50),
    severity: z.enum(SEVERITIES),
    status: z.enum(ALERT_STATUSES),
    title: z.string(),
    description: z.string().nullable(),
    operation_id: uuid.nullable(),
    operateur_id: uuid.nullable(),
    spv_id: uuid.nullable(),
    fond_id: uuid.nullable(),
    /** The measure that crossed its threshold, when there is one; values are decimal strings. */
    metric: z
      .object({ name: z.string(), value: decimal, threshold: decimal, unit: z.string() })
      .nullable(),
    /** The business date the alert is about (a covenant test, a repayment), if any. */
    due_date: date.nullable(),
    /** Set while postponed: the alert comes back as open on that date. */
    postponed_until: date.nullable(),
    detected_at: dateTime,
    acknowledged_at: dateTime.nullable(),
    acknowledged_by: z.string().nullable(),
    /** When and by whom it was resolved or marked a false positive. */
    closed_at: dateTime.nullable(),
    closed_by: z.string().nullable(),
    /** Every move, oldest first; the first one (from null) is the detection. */
    history: z.array(alertMoveSchema),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type Alert = z.output<typeof alertSchema>;

export const notificationSchema = component(
  "Notification",
  z.object({
    id: uuid,
    title: z.string(),
    severity: z.enum(SEVERITIES),
    read: z.boolean(),
    read_at: dateTime.nullable(),
    operation_id: uuid.nullable(),
    /** The alert this notification announces, if any. */
    alert_id: uuid.nullable(),
    created_at: dateTime,
  }),
);
export type Notification = z.output<typeof notificationSchema>;

/** Spec part 2, unread notification count. */
export const unreadCountSchema = component(
  "UnreadNotificationCount",
  z.object({ count: z.int().min(0), has_critical: z.boolean() }),
);
