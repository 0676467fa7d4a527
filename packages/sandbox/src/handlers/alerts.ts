import { randomUUID } from "node:crypto";
import { z } from "zod";
import { businessDate } from "../clock.js";
import { serviceAccount } from "../keys.js";
import {
  ALERT_STATUSES,
  type Alert,
  type AlertStatus,
  alertSchema,
  notificationSchema,
  SEVERITIES,
  unreadCountSchema,
} from "../models/alerts.js";
import { component, date, dateTime, pageOf } from "../models/common.js";
import { invalid, notFound } from "../problem.js";
import { defineRoute, json, type RouteContext } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { boolParam, uuid } from "../validation.js";
import { page, pageQuery } from "./pagination.js";

type Move = "acknowledge" | "postpone" | "resolve" | "false_positive";

/**
 * The alert lifecycle (the sandbox's choice; spec part 3 shows no transitions): resolved and
 * false positive are final; a postponed alert comes back as open on its date.
 */
export const ALERT_MOVES: Transitions<AlertStatus, Move> = {
  acknowledge: ["open", "postponed"],
  postpone: ["open", "acknowledged", "postponed"],
  resolve: ["open", "acknowledged", "postponed"],
  false_positive: ["open", "acknowledged", "postponed"],
};

const MOVE_TO: Record<Move, AlertStatus> = {
  acknowledge: "acknowledged",
  postpone: "postponed",
  resolve: "resolved",
  false_positive: "false_positive",
};

const SEVERITY_RANK = { critical: 0, warning: 1, info: 2 } as const;
const POSTPONE_MAX_DAYS = 365;

const alertParams = z.strictObject({ alert_id: uuid });
const commentBody = z.strictObject({ comment: z.string().min(1).max(2000).optional() }).optional();

/**
 * Alerts whose postponement has run out come back as open, with a fresh unread notification
 * when they matter: read lazily, on every alerts or notifications request, so that moving the
 * sandbox's clock is enough to see it happen.
 */
function wakePostponed(state: SandboxState, nowMs: number): void {
  const today = businessDate(nowMs);
  const at = new Date(nowMs).toISOString();
  for (const alert of state.data.alerts) {
    if (alert.status !== "postponed" || (alert.postponed_until ?? today) > today) continue;
    alert.history.push({ from: "postponed", to: "open", at, by: "system", comment: null });
    Object.assign(alert, { status: "open", postponed_until: null, updated_at: at });
    if (alert.severity !== "info") {
      state.data.notifications.push({
        id: randomUUID(),
        title: alert.title,
        severity: alert.severity,
        read: false,
        read_at: null,
        operation_id: alert.operation_id,
        alert_id: alert.id,
        created_at: at,
      });
    }
  }
}

function findAlert(state: SandboxState, id: string): Alert {
  const alert = state.data.alerts.find((a) => a.id === id.toLowerCase());
  if (!alert) throw notFound("alert", id, "alert_not_found");
  return alert;
}

/** One move of the lifecycle; its notifications count as read once someone acted on it. */
function moveAlert(
  ctx: RouteContext<{ alert_id: string }, unknown, unknown>,
  move: Move,
  comment: string | undefined,
  until?: string,
): Alert {
  const nowMs = ctx.now();
  wakePostponed(ctx.state, nowMs);
  const alert = findAlert(ctx.state, ctx.params.alert_id);
  assertTransition(ALERT_MOVES, move, alert.status, `Alert ${alert.id}`);
  const at = new Date(nowMs).toISOString();
  const by = serviceAccount(ctx.key);
  const to = MOVE_TO[move];
  alert.history.push({ from: alert.status, to, at, by, comment: comment ?? null });
  alert.status = to;
  alert.postponed_until = until ?? null;
  alert.updated_at = at;
  if (to === "acknowledged") Object.assign(alert, { acknowledged_at: at, acknowledged_by: by });
  if (to === "resolved" || to === "false_positive")
    Object.assign(alert, { closed_at: at, closed_by: by });
  for (const n of ctx.state.data.notifications) {
    if (n.alert_id === alert.id && !n.read) Object.assign(n, { read: true, read_at: at });
  }
  return alert;
}

function unreadCount(state: SandboxState) {
  const unread = state.data.notifications.filter((n) => !n.read);
  return { count: unread.length, has_critical: unread.some((n) => n.severity === "critical") };
}

/** For the contract test: the first alert a move may start from. */
function alertReadyFor(move: Move) {
  return ({ state }: { state: SandboxState }) => {
    const alert = state.data.alerts.find((a) => ALERT_MOVES[move].includes(a.status));
    return alert ? { params: { alert_id: alert.id } } : {};
  };
}

const moveRoute = (move: Move, path: string, summary: string) =>
  defineRoute({
    id: `alert_${move}`,
    family: "alerts",
    method: "POST",
    path: `/alerts/{alert_id}/${path}`,
    scope: "alerts:write",
    kind: "write",
    summary,
    params: alertParams,
    body: commentBody,
    response: { status: 200, schema: alertSchema },
    refusals: { 404: ["alert_not_found"], 409: ["invalid_transition"] },
    example: alertReadyFor(move),
    handle: (ctx) => json(moveAlert(ctx, move, ctx.body?.comment)),
  });

const markAllReadResult = component(
  "NotificationsMarkedRead",
  z.object({ marked: z.int().min(0), ...unreadCountSchema.shape }),
);

export const alertRoutes = [
  defineRoute({
    id: "alerts_list",
    family: "alerts",
    method: "GET",
    path: "/alerts",
    scope: "alerts:read",
    kind: "read",
    summary: "List alerts, critical first",
    query: z.strictObject({
      status: z.enum(ALERT_STATUSES).optional(),
      severity: z.enum(SEVERITIES).optional(),
      alert_type: z.string().min(1).max(50).optional(),
      operation_id: uuid.optional(),
      ...pageQuery(200, 50),
    }),
    response: { status: 200, schema: component("AlertList", pageOf(alertSchema)) },
    handle({ query, state, now }) {
      wakePostponed(state, now());
      const alerts = state.data.alerts
        .filter(
          (a) =>
            (query.status === undefined || a.status === query.status) &&
            (query.severity === undefined || a.severity === query.severity) &&
            (query.alert_type === undefined || a.alert_type === query.alert_type) &&
            (query.operation_id === undefined ||
              a.operation_id === query.operation_id.toLowerCase()),
        )
        .sort(
          (a, b) =>
            SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
            b.detected_at.localeCompare(a.detected_at) ||
            a.id.localeCompare(b.id),
        );
      return json(page(alerts, query));
    },
  }),
  defineRoute({
    id: "alert_get",
    family: "alerts",
    method: "GET",
    path: "/alerts/{alert_id}",
    scope: "alerts:read",
    kind: "read",
    summary: "Get an alert with its history",
    params: alertParams,
    response: { status: 200, schema: alertSchema },
    refusals: { 404: ["alert_not_found"] },
    handle({ params, state, now }) {
      wakePostponed(state, now());
      return json(findAlert(state, params.alert_id));
    },
  }),
  moveRoute("acknowledge", "acknowledge", "Acknowledge an alert"),
  moveRoute("resolve", "resolve", "Resolve an alert"),
  defineRoute({
    id: "alert_postpone",
    family: "alerts",
    method: "POST",
    path: "/alerts/{alert_id}/postpone",
    scope: "alerts:write",
    kind: "write",
    summary: "Postpone an alert until a date",
    description: `The alert comes back as open on \`until\`, a date after today and at most ${POSTPONE_MAX_DAYS} days ahead.`,
    params: alertParams,
    body: z.strictObject({ until: date, comment: z.string().min(1).max(2000).optional() }),
    response: { status: 200, schema: alertSchema },
    refusals: { 404: ["alert_not_found"], 409: ["invalid_transition"] },
    example: (ctx) => ({
      ...alertReadyFor("postpone")(ctx),
      body: { until: addDays(ctx.today, 7), comment: "À revoir au prochain comité." },
    }),
    handle(ctx) {
      const today = businessDate(ctx.now());
      const latest = addDays(today, POSTPONE_MAX_DAYS);
      if (ctx.body.until <= today || ctx.body.until > latest) {
        throw invalid([
          {
            field: "until",
            rule: `after ${today}, at most ${latest}`,
            message: `must be a date after today (${today}) and at most ${POSTPONE_MAX_DAYS} days ahead`,
          },
        ]);
      }
      return json(moveAlert(ctx, "postpone", ctx.body.comment, ctx.body.until));
    },
  }),
  moveRoute("false_positive", "false-positive", "Mark an alert as a false positive"),
  defineRoute({
    id: "notifications_list",
    family: "alerts",
    method: "GET",
    path: "/notifications",
    scope: "notifications:read",
    kind: "read",
    summary: "List notifications, newest first",
    query: z.strictObject({
      unread_only: boolParam().optional(),
      severity: z.enum(SEVERITIES).optional(),
      ...pageQuery(200, 50),
    }),
    response: { status: 200, schema: component("NotificationList", pageOf(notificationSchema)) },
    handle({ query, state, now }) {
      wakePostponed(state, now());
      const notifications = state.data.notifications
        .filter(
          (n) =>
            (!query.unread_only || !n.read) &&
            (query.severity === undefined || n.severity === query.severity),
        )
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
      return json(page(notifications, query));
    },
  }),
  defineRoute({
    id: "notifications_unread_count",
    family: "alerts",
    method: "GET",
    path: "/notifications/unread-count",
    scope: "notifications:read",
    kind: "read",
    summary: "Count unread notifications",
    response: { status: 200, schema: unreadCountSchema },
    handle({ state, now }) {
      wakePostponed(state, now());
      return json(unreadCount(state));
    },
  }),
  defineRoute({
    id: "notification_mark_read",
    family: "alerts",
    method: "POST",
    path: "/notifications/{notification_id}/read",
    scope: "notifications:write",
    kind: "write",
    summary: "Mark a notification as read",
    description: "Marking a read notification again changes nothing.",
    params: z.strictObject({ notification_id: uuid }),
    response: { status: 200, schema: notificationSchema },
    refusals: { 404: ["notification_not_found"] },
    handle({ params, state, now }) {
      const notification = state.data.notifications.find(
        (n) => n.id === params.notification_id.toLowerCase(),
      );
      if (!notification)
        throw notFound("notification", params.notification_id, "notification_not_found");
      if (!notification.read)
        Object.assign(notification, { read: true, read_at: new Date(now()).toISOString() });
      return json(notification);
    },
  }),
  defineRoute({
    id: "notifications_mark_all_read",
    family: "alerts",
    method: "POST",
    path: "/notifications/read-all",
    scope: "notifications:write",
    kind: "write",
    summary: "Mark all notifications as read",
    description:
      "With `before`, only notifications created at or before it: what arrived after the caller last looked stays unread.",
    body: z.strictObject({ before: dateTime.optional() }).optional(),
    response: { status: 200, schema: markAllReadResult },
    handle({ body, state, now }) {
      wakePostponed(state, now());
      const at = new Date(now()).toISOString();
      const cutoff = body?.before === undefined ? null : Date.parse(body.before);
      let marked = 0;
      for (const n of state.data.notifications) {
        if (n.read || (cutoff !== null && Date.parse(n.created_at) > cutoff)) continue;
        Object.assign(n, { read: true, read_at: at });
        marked++;
      }
      return json({ marked, ...unreadCount(state) });
    },
  }),
];

function addDays(day: string, days: number): string {
  return businessDate(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000);
}
