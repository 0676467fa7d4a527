import { z } from "zod";
import { component, date, dateTime, pageOf, uuid } from "./common.js";

/** Tasks: fields and states not shown by the spec, the sandbox's choice (README). */

export const TASK_STATUSES = ["todo", "in_progress", "blocked", "done"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const STATUS_LABELS: Record<TaskStatus, string> = {
  todo: "À faire",
  in_progress: "En cours",
  blocked: "Bloquée",
  done: "Terminée",
};

export const TASK_PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export const LABEL_COLORS = [
  "slate",
  "blue",
  "green",
  "amber",
  "red",
  "purple",
  "teal",
  "pink",
] as const;

export const taskSchema = component(
  "Task",
  z.object({
    id: uuid,
    operation_id: uuid,
    operation_name: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(TASK_STATUSES),
    priority: z.enum(TASK_PRIORITIES),
    /** A user id of the entity (not necessarily a UUID), or nobody. */
    assignee_id: z.string().nullable(),
    assignee_name: z.string().nullable(),
    due_date: date.nullable(),
    label_ids: z.array(uuid),
    /** Order within its status column of the board, from 0. */
    position: z.int().min(0),
    /** Why the task is blocked; set while it is. */
    blocked_reason: z.string().nullable(),
    created_by: z.string(),
    created_at: dateTime,
    updated_at: dateTime,
    completed_at: dateTime.nullable(),
  }),
);
export type Task = z.output<typeof taskSchema>;

export const taskListSchema = component("TaskList", pageOf(taskSchema));

export const boardColumnSchema = component(
  "TaskBoardColumn",
  z.object({
    status: z.enum(TASK_STATUSES),
    label: z.string(),
    total: z.int().min(0),
    items: z.array(taskSchema),
  }),
);

export const boardSchema = component(
  "TaskBoard",
  z.object({ columns: z.array(boardColumnSchema), total: z.int().min(0) }),
);

export const taskLabelSchema = component(
  "TaskLabel",
  z.object({
    id: uuid,
    name: z.string(),
    color: z.enum(LABEL_COLORS),
    description: z.string().nullable(),
    /** How many tasks carry the label. */
    task_count: z.int().min(0),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type TaskLabel = z.output<typeof taskLabelSchema>;
export type StoredTaskLabel = Omit<TaskLabel, "task_count">;

export const taskLabelListSchema = component("TaskLabelList", pageOf(taskLabelSchema));
