import { randomUUID } from "node:crypto";
import type { SandboxData } from "./data/index.js";
import type { JsonObject } from "./models/common.js";
import type {
  ExecutionStatus,
  HistoryEvent,
  WorkflowDefinition,
  WorkflowExecution,
  WorkflowHistoryEntry,
  WorkflowState,
} from "./models/workflows.js";
import type { SandboxState } from "./state.js";
import type { Transitions } from "./transitions.js";

/**
 * Workflow definitions and their executions as the sandbox runs them (spec parts 2 and 3 name
 * the definition states draft, active, inactive, error; the moves, schedules and executions
 * are the sandbox's, listed in the README). Executions follow the sandbox's clock: queued, then
 * running, then finished; what they find is decided when they are queued, from the data.
 */

export type DefinitionMove = "enable" | "disable" | "run" | "delete" | "fail";

/**
 * A draft or an inactive definition is enabled; an active or failing one disabled. A manual run
 * needs a definition that is not a draft and not in error; an active one cannot be deleted
 * (disable it first). A failed execution puts an active or inactive definition in error; an
 * update repairs it (inactive, to be enabled again).
 */
export const WORKFLOW_MOVES: Transitions<WorkflowState, DefinitionMove> = {
  enable: ["draft", "inactive"],
  disable: ["active", "error"],
  run: ["active", "inactive"],
  delete: ["draft", "inactive", "error"],
  fail: ["active", "inactive"],
};

export const EXECUTION_QUEUE_SECONDS = 2;
export const EXECUTION_RUN_SECONDS = 8;

/** An execution as stored: its outcome is known from the start, published when it is due. */
export interface ExecutionRecord {
  id: string;
  workflow_key: string;
  trigger: "manual" | "schedule";
  requested_by: string;
  comment: string | null;
  queued_at: string;
  outcome: "succeeded" | "failed";
  result: JsonObject | null;
  error: string | null;
  /** Whether its end was recorded (history, the definition's state). */
  settled: boolean;
}

// ----- schedules -----

export type ScheduleMode = "daily" | "weekly" | "monthly" | "on_event";

interface Schedule {
  mode: ScheduleMode;
  minute: number;
  hour: number;
  day: number | null;
  weekday: number | null;
}

const CRON = /^(\d{1,2}) (\d{1,2}) (\*|\d{1,2}) \* (\*|\d)$/;
export const SCHEDULE_RULE =
  "on_event, or a cron in UTC: 'm h * * *' (daily), 'm h * * d' (weekly, d 0-6) or 'm h D * *' (monthly, D 1-28)";

/** The schedules the sandbox runs: on an event, or a daily, weekly or monthly time (UTC). */
export function parseSchedule(text: string): Schedule | null {
  if (text === "on_event")
    return { mode: "on_event", minute: 0, hour: 0, day: null, weekday: null };
  const match = CRON.exec(text);
  if (!match) return null;
  const [, m, h, d, w] = match;
  const minute = Number(m);
  const hour = Number(h);
  const day = d === "*" ? null : Number(d);
  const weekday = w === "*" ? null : Number(w);
  if (minute > 59 || hour > 23) return null;
  if (day !== null && (day < 1 || day > 28 || weekday !== null)) return null;
  if (weekday !== null && weekday > 6) return null;
  const mode = day !== null ? "monthly" : weekday !== null ? "weekly" : "daily";
  return { mode, minute, hour, day, weekday };
}

export function scheduleMode(text: string): ScheduleMode {
  return parseSchedule(text)?.mode ?? "on_event";
}

/** The first time the schedule falls strictly after `afterMs`; null for `on_event`. */
export function nextRun(text: string, afterMs: number): string | null {
  const schedule = parseSchedule(text);
  if (!schedule || schedule.mode === "on_event") return null;
  const start = new Date(afterMs);
  for (let offset = 0; offset <= 62; offset++) {
    const candidate = Date.UTC(
      start.getUTCFullYear(),
      start.getUTCMonth(),
      start.getUTCDate() + offset,
      schedule.hour,
      schedule.minute,
    );
    const at = new Date(candidate);
    if (candidate <= afterMs) continue;
    if (schedule.weekday !== null && at.getUTCDay() !== schedule.weekday) continue;
    if (schedule.day !== null && at.getUTCDate() !== schedule.day) continue;
    return at.toISOString();
  }
  return null;
}

// ----- executions -----

/** What a run of `definition` finds in the data now: checked records, or the missing ones. */
export function runOutcome(
  data: Pick<SandboxData, "operations" | "operators">,
  definition: WorkflowDefinition,
): Pick<ExecutionRecord, "outcome" | "result" | "error"> {
  const configured = definition.configuration.operation_ids;
  const ids = Array.isArray(configured)
    ? configured.filter((id): id is string => typeof id === "string")
    : null;
  const missing = (ids ?? []).filter(
    (id) => !data.operations.some((o) => o.id === id.toLowerCase()),
  );
  if (missing.length > 0) {
    return {
      outcome: "failed",
      result: null,
      error: `Opération introuvable dans l'entité : ${missing.join(", ")}.`,
    };
  }
  if (definition.business_scope === "operateurs") {
    const disputed = data.operators.filter((o) => o.litiges_en_cours);
    return succeeded(data.operators.length, disputed.length, "opérateur(s)");
  }
  const operations = ids
    ? data.operations.filter((o) => ids.some((id) => id.toLowerCase() === o.id))
    : data.operations.filter((o) => o.phase !== "terminee");
  const watched = operations.filter((o) => o.statut_interne !== "nominal");
  return succeeded(operations.length, watched.length, "opération(s)");
}

function succeeded(checked: number, findings: number, noun: string) {
  return {
    outcome: "succeeded" as const,
    result: {
      checked,
      findings,
      summary: `${findings} ${noun} à examiner sur ${checked} contrôlée(s).`,
    },
    error: null,
  };
}

const startOf = (e: ExecutionRecord) => Date.parse(e.queued_at) + EXECUTION_QUEUE_SECONDS * 1000;
const endOf = (e: ExecutionRecord) => startOf(e) + EXECUTION_RUN_SECONDS * 1000;

export function executionStatus(record: ExecutionRecord, nowMs: number): ExecutionStatus {
  if (nowMs < startOf(record)) return "queued";
  return nowMs < endOf(record) ? "running" : record.outcome;
}

/** What the routes publish of an execution at `nowMs`. */
export function publishedExecution(record: ExecutionRecord, nowMs: number): WorkflowExecution {
  const status = executionStatus(record, nowMs);
  const finished = status === "succeeded" || status === "failed";
  return {
    id: record.id,
    workflow_key: record.workflow_key,
    status,
    trigger: record.trigger,
    requested_by: record.requested_by,
    comment: record.comment,
    queued_at: record.queued_at,
    started_at: status === "queued" ? null : new Date(startOf(record)).toISOString(),
    finished_at: finished ? new Date(endOf(record)).toISOString() : null,
    result: finished ? record.result : null,
    error: finished ? record.error : null,
  };
}

/** Queues a run of `definition`, recorded in its history. */
export function queueExecution(
  data: SandboxData,
  definition: WorkflowDefinition,
  run: {
    id: string;
    trigger: ExecutionRecord["trigger"];
    by: string;
    at: string;
    comment?: string;
  },
  historyId: string,
): ExecutionRecord {
  const record: ExecutionRecord = {
    id: run.id,
    workflow_key: definition.key,
    trigger: run.trigger,
    requested_by: run.by,
    comment: run.comment ?? null,
    queued_at: run.at,
    ...runOutcome(data, definition),
    settled: false,
  };
  data.workflowExecutions.push(record);
  definition.last_run_at = run.at;
  data.workflowHistory.push(
    historyEntry(historyId, definition.key, "run_requested", run.at, run.by, {
      execution_id: record.id,
      details: { trigger: run.trigger },
    }),
  );
  return record;
}

export function historyEntry(
  id: string,
  workflowKey: string,
  event: HistoryEvent,
  at: string,
  actor: string,
  extra: { execution_id?: string; details?: JsonObject } = {},
): WorkflowHistoryEntry {
  return {
    id,
    workflow_key: workflowKey,
    event,
    at,
    actor,
    execution_id: extra.execution_id ?? null,
    details: extra.details ?? {},
  };
}

/** Records the end of the executions that finished: history, and the definition in error. */
export function settleFinished(
  data: SandboxData,
  nowMs: number,
  newId: () => string = randomUUID,
): void {
  const finished = data.workflowExecutions
    .filter((e) => !e.settled && endOf(e) <= nowMs)
    .sort((a, b) => endOf(a) - endOf(b));
  for (const execution of finished) {
    execution.settled = true;
    const at = new Date(endOf(execution)).toISOString();
    const failed = execution.outcome === "failed";
    data.workflowHistory.push(
      historyEntry(
        newId(),
        execution.workflow_key,
        failed ? "run_failed" : "run_succeeded",
        at,
        "system",
        {
          execution_id: execution.id,
          details: failed ? { error: execution.error ?? "" } : (execution.result ?? {}),
        },
      ),
    );
    const definition = data.workflows.find((w) => w.key === execution.workflow_key);
    if (failed && definition && WORKFLOW_MOVES.fail.includes(definition.state)) {
      Object.assign(definition, {
        state: "error",
        enabled: false,
        last_error: execution.error,
        next_run_at: null,
      });
    }
  }
}

/**
 * Brings the workflows up to the sandbox's clock, lazily, before any workflow route answers:
 * finished executions are recorded, and each active definition whose time has come runs once
 * (missed slots are not replayed one by one), then waits for its next slot.
 */
export function settleWorkflows(state: SandboxState, nowMs: number): void {
  const { data } = state;
  settleFinished(data, nowMs);
  for (const definition of data.workflows) {
    if (definition.state !== "active" || definition.next_run_at === null) continue;
    const due = Date.parse(definition.next_run_at);
    if (due > nowMs) continue;
    queueExecution(
      data,
      definition,
      { id: randomUUID(), trigger: "schedule", by: "system", at: new Date(due).toISOString() },
      randomUUID(),
    );
    definition.next_run_at = nextRun(definition.schedule, nowMs);
  }
  settleFinished(data, nowMs);
}
