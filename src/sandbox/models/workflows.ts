import { z } from "zod";
import { component, dateTime, jsonObject, uuid } from "./common.js";

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
    state: z.enum(["draft", "active", "inactive", "error"]),
    schedule_mode: z.string(),
    configuration: jsonObject,
    metadata: jsonObject,
    last_run_at: dateTime.nullable(),
    next_run_at: dateTime.nullable(),
    last_error: z.string().nullable(),
  }),
);
export type WorkflowDefinition = z.output<typeof workflowDefinitionSchema>;
