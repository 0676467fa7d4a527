import { createHash } from "node:crypto";
import { z } from "zod";
import { businessDate } from "../clock.js";
import { addDays } from "../data/documents.js";
import { TAXONOMIES } from "../data/taxonomies.js";
import { frenchDate, frenchDecimal, frenchEuros, frenchLongDate } from "../french.js";
import type { SandboxKey } from "../keys.js";
import type { AlertStatus } from "../models/alerts.js";
import { date } from "../models/common.js";
import type { Operation } from "../models/operations.js";
import {
  type Narrative,
  narrativeSchema,
  TIMELINE_TYPES,
  type TimelineEvent,
  type TimelineType,
  timelinePageSchema,
} from "../models/timeline.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { intParam, uuid } from "../validation.js";
import { mayOpen } from "./dataroom-access.js";
import { page, pageQuery } from "./pagination.js";
import { scheduleView } from "./repayments.js";

const LABELS = new Map(
  TAXONOMIES.flatMap((d) => d.values.map((v) => [`${d.dimension}:${v.code}`, v.label] as const)),
);
const label = (dimension: string, code: string | null) =>
  code === null ? "non renseigné" : (LABELS.get(`${dimension}:${code}`) ?? code);

const NOTE_KINDS: Record<string, string> = {
  reporting: "de reporting",
  call: "d'appel",
  comite: "de comité",
  risque: "de risque",
  libre: "libre",
};
/** An alert's move, as a sentence tells it; and the state an open alert is in. */
const ALERT_MOVES: Record<AlertStatus, string> = {
  open: "rouverte",
  acknowledged: "prise en compte",
  postponed: "reportée",
  resolved: "résolue",
  false_positive: "classée en faux positif",
};

/** A stable UUID for an event: the same fact, the same id, on every read. */
function eventId(...parts: string[]): string {
  const hex = createHash("sha256").update(parts.join(":")).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((Number.parseInt(hex[16] ?? "0", 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const clip = (text: string | null, max = 280) =>
  text === null || text.length <= max ? text : `${text.slice(0, max - 1)}…`;

type EventFields = Pick<TimelineEvent, "occurred_at" | "title"> & Partial<TimelineEvent>;

/** What each kind of record is read with, and where its events go. */
interface EventSources {
  state: SandboxState;
  key: SandboxKey;
  operation: Operation;
  today: string;
  /** Records one event; `n` tells apart the events of one record. Future ones are left out. */
  add(
    type: TimelineType,
    source: { type: string; id: string },
    n: string,
    fields: EventFields,
  ): void;
}

/**
 * Everything that happened to an operation, built from the sandbox's records at the time of the
 * request: its status changes, notes, alerts and their moves, calendar events that are past,
 * documents attached (those of a dataroom the key may not open are left out), tasks created
 * and done, repayments received or rejected and lines that fell due unpaid. Newest first.
 */
export function operationEvents(
  state: SandboxState,
  key: SandboxKey,
  operation: Operation,
  nowMs: number,
): TimelineEvent[] {
  const now = new Date(nowMs).toISOString();
  const events: TimelineEvent[] = [];
  const add: EventSources["add"] = (type, source, n, fields) => {
    // In UTC, so that events compare and sort as instants whatever offset they were written in.
    const occurred = new Date(fields.occurred_at).toISOString();
    if (occurred > now) return;
    events.push({
      id: eventId(source.type, source.id, n),
      operation_id: operation.id,
      type,
      summary: null,
      actor: null,
      severity: null,
      source,
      ...fields,
      occurred_at: occurred,
    });
  };
  const sources: EventSources = { state, key, operation, today: businessDate(nowMs), add };
  for (const collect of EVENT_COLLECTORS) collect(sources);
  return events.sort(
    (a, b) => b.occurred_at.localeCompare(a.occurred_at) || a.id.localeCompare(b.id),
  );
}

function statusChangeEvents({ state, operation, add }: EventSources): void {
  for (const change of state.data.statusChanges.filter((c) => c.operation_id === operation.id)) {
    add("status_change", { type: "operation", id: operation.id }, change.id, {
      occurred_at: change.at,
      title:
        change.from === null
          ? `Opération créée au statut « ${label("operation_status", change.to)} »`
          : `Statut « ${label("operation_status", change.from)} » → « ${label("operation_status", change.to)} »`,
      actor: change.by,
    });
  }
}

function noteEvents({ state, operation, add }: EventSources): void {
  for (const note of state.data.notes.filter((n) => n.operation_id === operation.id)) {
    const source = { type: "note", id: note.id };
    add("note", source, "written", {
      occurred_at: note.date,
      title: `Note ${NOTE_KINDS[note.note_type] ?? note.note_type} de ${note.author_name}`,
      summary: clip(note.content),
      actor: note.user_id,
    });
    if (note.is_resolved && note.resolved_at) {
      add("note", source, "resolved", {
        occurred_at: note.resolved_at,
        title: "Note marquée comme résolue",
        summary: clip(note.content, 120),
        actor: note.resolved_by,
      });
    }
  }
}

function alertEvents({ state, operation, add }: EventSources): void {
  for (const alert of state.data.alerts.filter((a) => a.operation_id === operation.id)) {
    alert.history.forEach((move, i) => {
      add("alert", { type: "alert", id: alert.id }, String(i), {
        occurred_at: move.at,
        title:
          move.from === null
            ? `Alerte détectée : ${alert.title}`
            : `Alerte ${ALERT_MOVES[move.to]} : ${alert.title}`,
        summary: move.from === null ? clip(alert.description) : clip(move.comment),
        actor: move.by,
        severity: alert.severity,
      });
    });
  }
}

function calendarEvents({ state, operation, add }: EventSources): void {
  for (const event of state.data.calendarEvents.filter((e) => e.operation_id === operation.id)) {
    if (event.accepted === false) continue; // a rejected proposal never happened
    add("calendar_event", { type: "calendar_event", id: event.id }, "held", {
      occurred_at: `${event.event_date}T00:00:00.000Z`,
      title: event.title,
      summary: clip(event.description ?? null),
    });
  }
}

function documentEvents({ state, key, operation, add }: EventSources): void {
  for (const document of state.data.documents) {
    if (!mayOpen(state, key, document)) continue;
    for (const attachment of document.attachments) {
      if (attachment.target_type !== "operation" || attachment.target_id !== operation.id) continue;
      add("document", { type: "document", id: document.id }, attachment.id, {
        occurred_at: attachment.attached_at,
        title: `Document ajouté : ${document.name}`,
        summary: document.description,
        actor: attachment.attached_by,
      });
    }
  }
}

function taskEvents({ state, operation, add }: EventSources): void {
  for (const task of state.data.tasks.filter((t) => t.operation_id === operation.id)) {
    const source = { type: "task", id: task.id };
    add("task", source, "created", {
      occurred_at: task.created_at,
      title: `Tâche créée : ${task.title}`,
      summary: task.assignee_name ? `Confiée à ${task.assignee_name}.` : null,
      actor: task.created_by,
    });
    if (task.completed_at) {
      add("task", source, "done", {
        occurred_at: task.completed_at,
        title: `Tâche terminée : ${task.title}`,
        actor: task.assignee_id,
      });
    }
  }
}

/** Payments received or rejected, and schedule lines that fell due unpaid. */
function repaymentEvents({ state, operation, today, add }: EventSources): void {
  const schedule = scheduleView(state, operation.id, today);
  for (const r of state.data.repayments.filter((x) => x.operation_id === operation.id)) {
    if (r.status === "pending" || r.settled_at === null) continue;
    const line = schedule.lines.find((l) => l.id === r.schedule_line_id);
    add("repayment", { type: "repayment", id: r.id }, r.status, {
      occurred_at: r.settled_at,
      title:
        r.status === "confirmed"
          ? `Paiement reçu : ${frenchEuros(r.amount)}`
          : `Virement rejeté : ${frenchEuros(r.amount)}`,
      summary: r.comment ?? (line ? `Échéance du ${frenchDate(line.due_date)}.` : null),
      actor: r.created_by,
      severity: r.status === "rejected" ? "warning" : null,
    });
  }
  for (const line of schedule.lines.filter((l) => l.status === "late")) {
    add("repayment", { type: "repayment_schedule_line", id: line.id }, "late", {
      occurred_at: `${addDays(line.due_date, 1)}T00:00:00.000Z`,
      title: `Échéance du ${frenchDate(line.due_date)} impayée`,
      summary: `${frenchEuros(line.remaining)} restent dus.`,
      actor: "system",
      severity: "critical",
    });
  }
}

const EVENT_COLLECTORS = [
  statusChangeEvents,
  noteEvents,
  alertEvents,
  calendarEvents,
  documentEvents,
  taskEvents,
  repaymentEvents,
];

const typesParam = z
  .string()
  .max(200)
  .transform((value, ctx) => {
    const types = value.split(",").map((t) => t.trim());
    const unknown = types.filter((t) => !(TIMELINE_TYPES as readonly string[]).includes(t));
    if (unknown.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `must be a comma-separated list of ${TIMELINE_TYPES.join(", ")}; unknown: ${unknown.join(", ")}`,
      });
      return z.NEVER;
    }
    return types as TimelineType[];
  });

const NARRATIVE_UPCOMING_DAYS = 60;
const NARRATIVE_FACTS = 6;

/**
 * A narrative of the operation in French, written from its timeline and its current state:
 * where it stands, what happened over the period, what needs attention, what comes next.
 * Deterministic: the same records and the same business date give the same text.
 */
export function narrative(
  state: SandboxState,
  key: SandboxKey,
  operation: Operation,
  nowMs: number,
  days: number,
): Narrative {
  const today = businessDate(nowMs);
  const from = addDays(today, -days);
  const horizon = addDays(today, NARRATIVE_UPCOMING_DAYS);
  const events = operationEvents(state, key, operation, nowMs);
  const inPeriod = events.filter((e) => e.occurred_at.slice(0, 10) >= from);
  const schedule = scheduleView(state, operation.id, today);
  const attention = attentionPoints(state, operation, schedule, today);
  const upcoming = upcomingItems(state, operation, schedule, today, horizon);
  const sections: Narrative["sections"] = [
    { key: "situation", heading: "Situation", text: situationText(state, operation, events) },
    {
      key: "faits_marquants",
      heading: `Faits marquants depuis le ${frenchLongDate(from)}`,
      text: factsText(inPeriod, from),
    },
    {
      key: "points_attention",
      heading: "Points d'attention",
      text: attention.length > 0 ? attention.join(" ") : "Aucun point d'attention ouvert.",
    },
    {
      key: "a_venir",
      heading: `À venir (${NARRATIVE_UPCOMING_DAYS} jours)`,
      text:
        upcoming.length > 0
          ? `${upcoming.map((u) => `le ${frenchLongDate(u.day)}, ${u.text}`).join(" ; ")}.`.replace(
              /^l/,
              "L",
            )
          : `Rien de planifié d'ici le ${frenchLongDate(horizon)}.`,
    },
  ];
  return {
    operation_id: operation.id,
    title: `Synthèse – ${operation.name}`,
    language: "fr",
    as_of: today,
    period_start: from,
    period_end: today,
    event_count: inPeriod.length,
    sections,
    text: sections.map((s) => `${s.heading}\n${s.text}`).join("\n\n"),
  };
}

type Schedule = ReturnType<typeof scheduleView>;

/** Who carries it, its status and since when, its amounts. */
function situationText(
  state: SandboxState,
  operation: Operation,
  events: readonly TimelineEvent[],
): string {
  const f = operation.financial_summary;
  const operator = state.data.operators.find((o) => o.id === operation.operateur_id);
  const since = events.find((e) => e.type === "status_change");
  return [
    `« ${operation.name} » (${label("asset_class", operation.classe_actif)}, ${label("investment_type", operation.type_investissement).toLowerCase()})${operator?.name ? ` est portée par ${operator.name}` : ""}.`,
    `Elle est au statut « ${label("operation_status", operation.status)} »${since ? ` depuis le ${frenchLongDate(since.occurred_at)}` : ""}, statut interne « ${label("internal_status", operation.statut_interne)} ».`,
    typeof f.montant_engage === "string" && typeof f.encours === "string"
      ? `Montant engagé ${frenchEuros(f.montant_engage)}, encours ${frenchEuros(f.encours)}${typeof operation.kpi_snapshot.ltv === "string" ? `, LTV ${frenchDecimal(operation.kpi_snapshot.ltv)} %` : ""}.`
      : "",
  ]
    .filter((s) => s !== "")
    .join(" ");
}

/** The period's latest events, oldest first, and how many more the timeline holds. */
function factsText(inPeriod: readonly TimelineEvent[], from: string): string {
  if (inPeriod.length === 0) return `Aucun événement depuis le ${frenchLongDate(from)}.`;
  const facts = [...inPeriod].reverse().slice(-NARRATIVE_FACTS);
  const more = inPeriod.length - facts.length;
  return [
    ...facts.map(
      (e) =>
        `Le ${frenchLongDate(e.occurred_at)}, ${lowerFirst(e.title)}${e.summary ? ` (${stripDot(e.summary)})` : ""}.`,
    ),
    ...(more > 0
      ? [
          more === 1
            ? "Un autre événement, plus ancien, figure dans la chronologie."
            : `${more} autres événements sur la période, plus anciens, figurent dans la chronologie.`,
        ]
      : []),
  ].join(" ");
}

/** Open alerts (worst first), unpaid lines, blocked tasks, late tasks: one sentence each. */
function attentionPoints(
  state: SandboxState,
  operation: Operation,
  schedule: Schedule,
  today: string,
): string[] {
  const late = schedule.lines.filter((l) => l.status === "late");
  const openAlerts = state.data.alerts
    .filter(
      (a) =>
        a.operation_id === operation.id &&
        (a.status === "open" || a.status === "acknowledged" || a.status === "postponed"),
    )
    .sort((a, b) => severityRank(a.severity) - severityRank(b.severity));
  const tasks = state.data.tasks.filter((t) => t.operation_id === operation.id);
  const overdue = tasks.filter(
    (t) => t.status !== "done" && t.due_date !== null && t.due_date < today,
  );
  return [
    ...openAlerts.map(
      (a) =>
        `Alerte ${SEVERITY_WORDS[a.severity]} ${a.status === "open" ? "ouverte" : ALERT_MOVES[a.status]} : ${a.title}.`,
    ),
    ...(late.length > 0
      ? [
          `${late.length === 1 ? "Une échéance impayée" : `${late.length} échéances impayées`} pour ${frenchEuros(schedule.totals.late)}, la plus ancienne du ${frenchLongDate(late[0]?.due_date ?? today)}.`,
        ]
      : []),
    ...tasks
      .filter((t) => t.status === "blocked")
      .map((t) => `Tâche bloquée : ${t.title} (${stripDot(t.blocked_reason ?? "")}).`),
    ...overdue
      .filter((t) => t.status !== "blocked")
      .map(
        (t) => `Tâche en retard : ${t.title}, attendue le ${frenchLongDate(t.due_date ?? today)}.`,
      ),
  ];
}

/** Calendar events, lines due and tasks due between today and the horizon, by day. */
function upcomingItems(
  state: SandboxState,
  operation: Operation,
  schedule: Schedule,
  today: string,
  horizon: string,
): Array<{ day: string; text: string }> {
  const within = (day: string | null) => day !== null && day >= today && day <= horizon;
  return [
    ...state.data.calendarEvents
      .filter(
        (e) => e.operation_id === operation.id && e.accepted !== false && within(e.event_date),
      )
      .map((e) => ({ day: e.event_date, text: e.title })),
    ...schedule.lines
      .filter((l) => l.status === "due" && l.due_date <= horizon)
      .map((l) => ({ day: l.due_date, text: `échéance de ${frenchEuros(l.remaining)}` })),
    ...state.data.tasks
      .filter((t) => t.operation_id === operation.id && t.status !== "done" && within(t.due_date))
      .map((t) => ({ day: t.due_date ?? today, text: `tâche « ${t.title} »` })),
  ].sort((a, b) => a.day.localeCompare(b.day) || a.text.localeCompare(b.text, "fr"));
}

const SEVERITY_WORDS = { critical: "critique", warning: "à surveiller", info: "d'information" };
const severityRank = (s: string) => (s === "critical" ? 0 : s === "warning" ? 1 : 2);
const lowerFirst = (text: string) =>
  /^[A-ZÀ-Ý][a-zà-ÿ]/.test(text) ? text[0]?.toLowerCase() + text.slice(1) : text;
const stripDot = (text: string) => text.replace(/[.\s]+$/, "");

const operationParams = z.strictObject({ operation_id: uuid });

export const timelineRoutes = [
  defineRoute({
    id: "operation_timeline",
    family: "timeline",
    method: "GET",
    path: "/operations/{operation_id}/timeline",
    scope: "timeline:read",
    kind: "read",
    summary: "An operation's timeline: paginated events, newest first",
    description:
      "Status changes, notes, alerts and their moves, past calendar events, documents attached, tasks created and done, repayments received or rejected and lines that fell due unpaid, built from the records as they are now. Each event's id is stable. Filters: `types` (comma-separated), `since` and `until` (business dates, inclusive). Documents of a dataroom the key is not a member of are left out.",
    params: operationParams,
    query: z.strictObject({
      types: typesParam.optional(),
      since: date.optional(),
      until: date.optional(),
      ...pageQuery(200, 50),
    }),
    response: { status: 200, schema: timelinePageSchema },
    refusals: { 404: ["operation_not_found"] },
    handle({ params, query, state, key, now }) {
      const operation = state.operation(params.operation_id);
      const events = operationEvents(state, key, operation, now()).filter(
        (e) =>
          (query.types === undefined || query.types.includes(e.type)) &&
          (query.since === undefined || e.occurred_at.slice(0, 10) >= query.since) &&
          (query.until === undefined || e.occurred_at.slice(0, 10) <= query.until),
      );
      return json(page(events, query));
    },
  }),
  defineRoute({
    id: "operation_narrative",
    family: "timeline",
    method: "GET",
    path: "/operations/{operation_id}/timeline/narrative",
    scope: "timeline:read",
    kind: "read",
    summary: "A narrative of the operation, in French",
    description:
      "Four sections written from the timeline and the operation's current state: situation, the events of the last `days` days (default 90), points needing attention (open alerts, unpaid lines, blocked or late tasks), what comes in the next 60 days. The same records on the same business date give the same text.",
    params: operationParams,
    query: z.strictObject({ days: intParam(7, 365, 90) }),
    response: { status: 200, schema: narrativeSchema },
    refusals: { 404: ["operation_not_found"] },
    handle({ params, query, state, key, now }) {
      const operation = state.operation(params.operation_id);
      return json(narrative(state, key, operation, now(), query.days));
    },
  }),
];
