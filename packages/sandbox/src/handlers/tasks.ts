import { randomUUID } from "node:crypto";
import { z } from "zod";
import { serviceAccount } from "../keys.js";
import { date } from "../models/common.js";
import {
  boardColumnSchema,
  boardSchema,
  LABEL_COLORS,
  STATUS_LABELS,
  type StoredTaskLabel,
  TASK_PRIORITIES,
  TASK_STATUSES,
  type Task,
  type TaskStatus,
  taskLabelListSchema,
  taskLabelSchema,
  taskListSchema,
  taskSchema,
} from "../models/tasks.js";
import { type FieldError, invalid, notFound, Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { intParam, uuid } from "../validation.js";
import { page, pageQuery } from "./pagination.js";

/**
 * The task lifecycle (the sandbox's choice), by the status a move goes to: work starts from
 * todo or once unblocked, only work in progress is done, a done task reopens as todo.
 */
export const TASK_MOVES: Transitions<TaskStatus, TaskStatus> = {
  todo: ["in_progress", "blocked", "done"],
  in_progress: ["todo", "blocked"],
  blocked: ["todo", "in_progress"],
  done: ["in_progress"],
};

const taskFields = {
  title: z.string().trim().min(1).max(200),
  description: z.string().max(5000).nullable(),
  priority: z.enum(TASK_PRIORITIES),
  assignee_id: z.string().min(1).max(100).nullable(),
  due_date: date.nullable(),
  label_ids: z
    .array(uuid)
    .max(10)
    .refine(
      (ids) => new Set(ids.map((i) => i.toLowerCase())).size === ids.length,
      "must not repeat a label",
    ),
};

function findTask(state: SandboxState, id: string): Task {
  const task = state.data.tasks.find((t) => t.id === id.toLowerCase());
  if (!task) throw notFound("task", id, "task_not_found");
  return task;
}

function findLabel(state: SandboxState, id: string): StoredTaskLabel {
  const label = state.data.taskLabels.find((l) => l.id === id.toLowerCase());
  if (!label) throw notFound("task label", id, "task_label_not_found");
  return label;
}

/** The assignee and labels a write names must exist; a suspended user takes no task. */
function checkReferences(
  state: SandboxState,
  body: { assignee_id?: string | null; label_ids?: string[] },
): { assignee_name?: string | null; label_ids?: string[] } {
  const errors: FieldError[] = [];
  const out: { assignee_name?: string | null; label_ids?: string[] } = {};
  if (body.assignee_id !== undefined && body.assignee_id !== null) {
    const user = state.data.users.find((u) => u.id === body.assignee_id);
    if (!user)
      errors.push({
        field: "assignee_id",
        rule: "user of the entity",
        message: "names no user of this entity",
      });
    else if (user.status === "suspended")
      errors.push({
        field: "assignee_id",
        rule: "not suspended",
        message: `${user.id} is suspended`,
      });
    else out.assignee_name = user.display_name;
  } else if (body.assignee_id === null) out.assignee_name = null;
  if (body.label_ids !== undefined) {
    out.label_ids = body.label_ids.map((id) => id.toLowerCase());
    body.label_ids.forEach((id, i) => {
      if (!state.data.taskLabels.some((l) => l.id === id.toLowerCase()))
        errors.push({
          field: `label_ids[${i}]`,
          rule: "existing label",
          message: "names no task label",
        });
    });
  }
  if (errors.length > 0) throw invalid(errors, "reference_not_found");
  return out;
}

/** Where a task goes when it enters a column: last. */
function endOf(state: SandboxState, status: TaskStatus): number {
  return (
    Math.max(-1, ...state.data.tasks.filter((t) => t.status === status).map((t) => t.position)) + 1
  );
}

const byPosition = (a: Task, b: Task) =>
  a.position - b.position || a.created_at.localeCompare(b.created_at);

function column(status: TaskStatus, tasks: readonly Task[], limit: number) {
  const items = tasks.filter((t) => t.status === status).sort(byPosition);
  return {
    status,
    label: STATUS_LABELS[status],
    total: items.length,
    items: items.slice(0, limit),
  };
}

function labelView(state: SandboxState, label: StoredTaskLabel) {
  return {
    ...label,
    task_count: state.data.tasks.filter((t) => t.label_ids.includes(label.id)).length,
  };
}

function assertNameFree(state: SandboxState, name: string, except: string | null): void {
  const taken = state.data.taskLabels.find(
    (l) => l.id !== except && l.name.toLowerCase() === name.toLowerCase(),
  );
  if (taken) {
    throw new Problem(409, `A task label is already named ${taken.name}.`, {
      reasonCode: "label_name_taken",
    });
  }
}

const labelParams = z.strictObject({ label_id: uuid });
const taskParams = z.strictObject({ task_id: uuid });
const labelFields = {
  name: z.string().trim().min(1).max(40),
  color: z.enum(LABEL_COLORS),
  description: z.string().max(200).nullable(),
};

export const taskRoutes = [
  defineRoute({
    id: "tasks_board",
    family: "tasks",
    method: "GET",
    path: "/tasks/board",
    scope: "tasks:read",
    kind: "read",
    summary: "The kanban board: tasks in one column per status",
    description:
      "Columns todo, in_progress, blocked, done, each in its order (`position`), with its total and at most `limit` tasks. Filters: operation, assignee, label.",
    query: z.strictObject({
      operation_id: uuid.optional(),
      assignee_id: z.string().min(1).max(100).optional(),
      label_id: uuid.optional(),
      limit: intParam(1, 100, 50),
    }),
    response: { status: 200, schema: boardSchema },
    handle({ query, state }) {
      const tasks = state.data.tasks.filter(
        (t) =>
          (query.operation_id === undefined ||
            t.operation_id === query.operation_id.toLowerCase()) &&
          (query.assignee_id === undefined || t.assignee_id === query.assignee_id) &&
          (query.label_id === undefined || t.label_ids.includes(query.label_id.toLowerCase())),
      );
      return json({
        columns: TASK_STATUSES.map((status) => column(status, tasks, query.limit)),
        total: tasks.length,
      });
    },
  }),
  defineRoute({
    id: "operation_tasks_list",
    family: "tasks",
    method: "GET",
    path: "/operations/{operation_id}/tasks",
    scope: "tasks:read",
    kind: "read",
    summary: "List an operation's tasks, by status then position",
    params: z.strictObject({ operation_id: uuid }),
    query: z.strictObject({ status: z.enum(TASK_STATUSES).optional(), ...pageQuery(200, 50) }),
    response: { status: 200, schema: taskListSchema },
    refusals: { 404: ["operation_not_found"] },
    handle({ params, query, state }) {
      const operation = state.operation(params.operation_id);
      const tasks = state.data.tasks
        .filter(
          (t) =>
            t.operation_id === operation.id &&
            (query.status === undefined || t.status === query.status),
        )
        .sort(
          (a, b) =>
            TASK_STATUSES.indexOf(a.status) - TASK_STATUSES.indexOf(b.status) || byPosition(a, b),
        );
      return json(page(tasks, query));
    },
  }),
  defineRoute({
    id: "task_create",
    family: "tasks",
    method: "POST",
    path: "/operations/{operation_id}/tasks",
    scope: "tasks:write",
    kind: "write",
    summary: "Create a task on an operation",
    description:
      "It starts as todo (or in_progress), last of its column; priority defaults to normal.",
    params: z.strictObject({ operation_id: uuid }),
    body: z.strictObject({
      title: taskFields.title,
      description: taskFields.description.optional(),
      status: z.enum(["todo", "in_progress"]).optional(),
      priority: taskFields.priority.optional(),
      assignee_id: taskFields.assignee_id.optional(),
      due_date: taskFields.due_date.optional(),
      label_ids: taskFields.label_ids.optional(),
    }),
    response: { status: 201, schema: taskSchema },
    refusals: { 404: ["operation_not_found"], 422: ["reference_not_found"] },
    handle({ params, body, state, key, now }) {
      const operation = state.operation(params.operation_id);
      const refs = checkReferences(state, body);
      const status = body.status ?? "todo";
      const at = new Date(now()).toISOString();
      const task: Task = {
        id: randomUUID(),
        operation_id: operation.id,
        operation_name: operation.name,
        title: body.title,
        description: body.description ?? null,
        status,
        priority: body.priority ?? "normal",
        assignee_id: body.assignee_id ?? null,
        assignee_name: refs.assignee_name ?? null,
        due_date: body.due_date ?? null,
        label_ids: refs.label_ids ?? [],
        position: endOf(state, status),
        blocked_reason: null,
        created_by: serviceAccount(key),
        created_at: at,
        updated_at: at,
        completed_at: null,
      };
      state.data.tasks.push(task);
      return json(task, 201);
    },
  }),
  defineRoute({
    id: "task_update",
    family: "tasks",
    method: "PATCH",
    path: "/tasks/{task_id}",
    scope: "tasks:write",
    kind: "write",
    summary: "Change a task, or move it to another status",
    description:
      "Moves: todo → in_progress or blocked; in_progress → todo, blocked or done; blocked → todo or in_progress; done → todo (reopened). Any other is 409 `invalid_transition`. Moving to blocked needs a `blocked_reason`; leaving blocked clears it. A moved task goes last in its new column. Absent fields are left as they are; null clears a nullable one.",
    params: taskParams,
    body: z.strictObject({
      title: taskFields.title.optional(),
      description: taskFields.description.optional(),
      status: z.enum(TASK_STATUSES).optional(),
      priority: taskFields.priority.optional(),
      assignee_id: taskFields.assignee_id.optional(),
      due_date: taskFields.due_date.optional(),
      label_ids: taskFields.label_ids.optional(),
      blocked_reason: z.string().trim().min(1).max(500).optional(),
    }),
    response: { status: 200, schema: taskSchema },
    refusals: {
      404: ["task_not_found"],
      409: ["invalid_transition"],
      422: ["reference_not_found"],
    },
    example: ({ state }) => {
      const task = state.data.tasks.find((t) => t.status === "todo");
      return task ? { params: { task_id: task.id }, body: { status: "in_progress" } } : {};
    },
    handle({ params, body, state, now }) {
      const task = findTask(state, params.task_id);
      const { status, blocked_reason: reason, ...fields } = body;
      if (Object.keys(body).length === 0) {
        throw invalid([
          { field: "body", rule: "min 1 field", message: "send at least one field to change" },
        ]);
      }
      const moving = status !== undefined && status !== task.status;
      if (moving) assertTransition(TASK_MOVES, status, task.status, `Task ${task.id}`);
      const blocked = (moving ? status : task.status) === "blocked";
      if (reason !== undefined && !blocked) {
        throw invalid([
          {
            field: "blocked_reason",
            rule: "only for a blocked task",
            message: "is set only on a blocked task",
          },
        ]);
      }
      if (moving && status === "blocked" && reason === undefined) {
        throw invalid([
          {
            field: "blocked_reason",
            rule: "required to block",
            message: "say what the task waits for",
          },
        ]);
      }
      const refs = checkReferences(state, fields);
      const at = new Date(now()).toISOString();
      Object.assign(
        task,
        Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
        refs,
        { updated_at: at },
      );
      if (reason !== undefined) task.blocked_reason = reason;
      if (moving) {
        Object.assign(task, {
          position: endOf(state, status),
          status,
          completed_at: status === "done" ? at : null,
          blocked_reason: status === "blocked" ? reason : null,
        });
      }
      return json(task);
    },
  }),
  defineRoute({
    id: "task_delete",
    family: "tasks",
    method: "DELETE",
    path: "/tasks/{task_id}",
    scope: "tasks:write",
    kind: "write",
    summary: "Delete a task",
    params: taskParams,
    response: { status: 204 },
    refusals: { 404: ["task_not_found"] },
    example: ({ state }) => {
      const task =
        state.data.tasks.findLast((t) => t.created_by.startsWith("apikey:")) ??
        state.data.tasks.at(-1);
      return task ? { params: { task_id: task.id } } : {};
    },
    handle({ params, state }) {
      const task = findTask(state, params.task_id);
      state.data.tasks.splice(state.data.tasks.indexOf(task), 1);
      return { status: 204 };
    },
  }),
  defineRoute({
    id: "tasks_reorder",
    family: "tasks",
    method: "POST",
    path: "/tasks/reorder",
    scope: "tasks:write",
    kind: "write",
    summary: "Reorder tasks within a column of the board",
    description:
      "`task_ids` in their new order, all in the column `status` (409 `task_not_in_column` otherwise: a move between columns is a PATCH of `status`). They take, in that order, the places they held: the rest of the column does not move, so a filtered board can be reordered on its own. Answers the whole column.",
    body: z.strictObject({
      status: z.enum(TASK_STATUSES),
      task_ids: z
        .array(uuid)
        .min(1)
        .max(200)
        .refine(
          (ids) => new Set(ids.map((i) => i.toLowerCase())).size === ids.length,
          "must not repeat a task",
        ),
    }),
    response: { status: 200, schema: boardColumnSchema },
    refusals: { 409: ["task_not_in_column"], 422: ["reference_not_found"] },
    example: ({ state }) => {
      const todo = state.data.tasks.filter((t) => t.status === "todo").sort(byPosition);
      return {
        body: {
          status: "todo",
          task_ids: todo
            .slice(0, 3)
            .reverse()
            .map((t) => t.id),
        },
      };
    },
    handle({ body, state, now }) {
      const errors: FieldError[] = [];
      const tasks = body.task_ids.flatMap((id, i) => {
        const task = state.data.tasks.find((t) => t.id === id.toLowerCase());
        if (!task)
          errors.push({ field: `task_ids[${i}]`, rule: "existing task", message: "names no task" });
        return task ? [task] : [];
      });
      if (errors.length > 0) throw invalid(errors, "reference_not_found");
      const stray = tasks.find((t) => t.status !== body.status);
      if (stray) {
        throw new Problem(
          409,
          `Task ${stray.id} is ${stray.status}, not ${body.status}; move it with PATCH first.`,
          {
            reasonCode: "task_not_in_column",
          },
        );
      }
      const places = tasks.map((t) => t.position).sort((a, b) => a - b);
      const at = new Date(now()).toISOString();
      for (const [i, task] of tasks.entries())
        Object.assign(task, { position: places[i], updated_at: at });
      return json(column(body.status, state.data.tasks, Number.MAX_SAFE_INTEGER));
    },
  }),
  defineRoute({
    id: "task_labels_list",
    family: "tasks",
    method: "GET",
    path: "/tasks/labels",
    scope: "tasks:read",
    kind: "read",
    summary: "List task labels",
    query: z.strictObject(pageQuery(100, 50)),
    response: { status: 200, schema: taskLabelListSchema },
    handle({ query, state }) {
      const labels = [...state.data.taskLabels]
        .sort((a, b) => a.name.localeCompare(b.name, "fr"))
        .map((l) => labelView(state, l));
      return json(page(labels, query));
    },
  }),
  defineRoute({
    id: "task_label_create",
    family: "tasks",
    method: "POST",
    path: "/tasks/labels",
    scope: "tasks:write",
    kind: "write",
    summary: "Create a task label",
    description: "Names are unique, whatever the case (409 `label_name_taken`).",
    body: z.strictObject({
      name: labelFields.name,
      color: labelFields.color,
      description: labelFields.description.optional(),
    }),
    response: { status: 201, schema: taskLabelSchema },
    refusals: { 409: ["label_name_taken"] },
    example: () => ({ body: { name: "Notaire", color: "green" } }),
    handle({ body, state, now }) {
      assertNameFree(state, body.name, null);
      const at = new Date(now()).toISOString();
      const label: StoredTaskLabel = {
        id: randomUUID(),
        name: body.name,
        color: body.color,
        description: body.description ?? null,
        created_at: at,
        updated_at: at,
      };
      state.data.taskLabels.push(label);
      return json(labelView(state, label), 201);
    },
  }),
  defineRoute({
    id: "task_label_update",
    family: "tasks",
    method: "PATCH",
    path: "/tasks/labels/{label_id}",
    scope: "tasks:write",
    kind: "write",
    summary: "Change a task label",
    params: labelParams,
    body: z.strictObject(labelFields).partial(),
    response: { status: 200, schema: taskLabelSchema },
    refusals: { 404: ["task_label_not_found"], 409: ["label_name_taken"] },
    example: () => ({ body: { color: "pink" } }),
    handle({ params, body, state, now }) {
      const label = findLabel(state, params.label_id);
      if (Object.keys(body).length === 0) {
        throw invalid([
          { field: "body", rule: "min 1 field", message: "send at least one field to change" },
        ]);
      }
      if (body.name !== undefined) assertNameFree(state, body.name, label.id);
      Object.assign(
        label,
        Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)),
        { updated_at: new Date(now()).toISOString() },
      );
      return json(labelView(state, label));
    },
  }),
];
