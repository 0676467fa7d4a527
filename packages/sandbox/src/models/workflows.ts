import { z } from "zod";
import { component, dateTime, jsonObject, uuid } from "./common.js";

/** Spec part 3: a definition's state, distinct from the result of its executions. */
export const WORKFLOW_STATES = ["draft", "active", "inactive", "error"] as const;
export type WorkflowState = (typeof WORKFLOW_STATES)[number];

/** A workflow recommendation (fields chosen by the sandbox; README). */
export const recommendationSchema = component(
  "WorkflowRecommendation",
  z.object({
    id: z.string(),
    preset_key: z.string(),
    title: z.string(),
    rationale: z.string(),
    processing_family: z.string(),
    processing_types: z.array(z.string()),
    expected_effect: z.string(),
    business_scope: z.string(),
    schedule_mode: z.string(),
    suggested_schedule: z.string(),
    operation_ids: z.array(uuid),
    confidence: z.number(),
    status: z.enum(["proposed", "validated", "applied"]),
    applied_workflow_key: z.string().nullable(),
    created_at: dateTime,
  }),
);
export type Recommendation = z.output<typeof recommendationSchema>;

/**
 * Spec part 2, workflow definition. The spec lists only the meanings of its fields, in this
 * order; the names are the sandbox's choice.
 */
export const workflowDefinitionSchema = component(
  "WorkflowDefinition",
  z.object({
    key: z.string(),
    name: z.string(),
    description: z.string(),
    processing_family: z.string(),
    schedule: z.string(),
    enabled: z.boolean(),
    is_custom: z.boolean(),
    is_editable: z.boolean(),
    is_deletable: z.boolean(),
    can_toggle: z.boolean(),
    origin: z.enum(["system", "custom"]),
    business_scope: z.string(),
    expected_effect: z.string(),
    processing_types: z.array(z.string()),
    preset_key: z.string(),
    state: z.enum(WORKFLOW_STATES),
    schedule_mode: z.string(),
    configuration: jsonObject,
    metadata: jsonObject,
    last_run_at: dateTime.nullable(),
    next_run_at: dateTime.nullable(),
    last_error: z.string().nullable(),
  }),
);
export type WorkflowDefinition = z.output<typeof workflowDefinitionSchema>;

/** A preset of the catalogue a definition starts from (fields chosen by the sandbox; README). */
export const workflowPresetSchema = component(
  "WorkflowPreset",
  z.object({
    key: z.string(),
    name: z.string(),
    expected_effect: z.string(),
    processing_family: z.string(),
    processing_types: z.array(z.string()),
    business_scope: z.string(),
    schedule_mode: z.string(),
    default_schedule: z.string(),
    default_configuration: jsonObject,
  }),
);
export type WorkflowPreset = z.output<typeof workflowPresetSchema>;

export const EXECUTION_STATUSES = ["queued", "running", "succeeded", "failed"] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** One run of a definition: its own states, distinct from the definition's (spec part 2). */
export const workflowExecutionSchema = component(
  "WorkflowExecution",
  z.object({
    id: uuid,
    workflow_key: z.string(),
    status: z.enum(EXECUTION_STATUSES),
    trigger: z.enum(["manual", "schedule"]),
    requested_by: z.string(),
    comment: z.string().nullable(),
    queued_at: dateTime,
    started_at: dateTime.nullable(),
    finished_at: dateTime.nullable(),
    /** What the run found, once it succeeded. */
    result: jsonObject.nullable(),
    error: z.string().nullable(),
  }),
);
export type WorkflowExecution = z.output<typeof workflowExecutionSchema>;

export const HISTORY_EVENTS = [
  "created",
  "updated",
  "enabled",
  "disabled",
  "deleted",
  "run_requested",
  "run_succeeded",
  "run_failed",
] as const;
export type HistoryEvent = (typeof HISTORY_EVENTS)[number];

/** The audit trail of the definitions, deleted ones included. */
export const workflowHistorySchema = component(
  "WorkflowHistoryEntry",
  z.object({
    id: uuid,
    workflow_key: z.string(),
    event: z.enum(HISTORY_EVENTS),
    at: dateTime,
    actor: z.string(),
    execution_id: uuid.nullable(),
    details: jsonObject,
  }),
);
export type WorkflowHistoryEntry = z.output<typeof workflowHistorySchema>;
