import { randomBytes, randomUUID } from "node:crypto";
import { z } from "zod";
import { workflowFromRecommendation } from "../data/demo.js";
import { serviceAccount } from "../keys.js";
import { component, jsonObject, pageOf } from "../models/common.js";
import {
  EXECUTION_STATUSES,
  HISTORY_EVENTS,
  type HistoryEvent,
  recommendationSchema,
  WORKFLOW_STATES,
  type WorkflowDefinition,
  workflowDefinitionSchema,
  workflowExecutionSchema,
  workflowHistorySchema,
  workflowPresetSchema,
} from "../models/workflows.js";
import { invalid, notFound, Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition } from "../transitions.js";
import { uuid } from "../validation.js";
import {
  executionStatus,
  historyEntry,
  nextRun,
  parseSchedule,
  publishedExecution,
  queueExecution,
  SCHEDULE_RULE,
  scheduleMode,
  settleWorkflows,
  WORKFLOW_MOVES,
} from "../workflows.js";
import { page, pageQuery } from "./pagination.js";
import { sentFields } from "./patch.js";

// The spec shows neither body: these are the sandbox's choices (see README).
const previewBody = z
  .strictObject({
    operation_ids: z.array(uuid).max(50).optional(),
    preset_keys: z.array(z.string().max(80)).max(20).optional(),
    include_applied: z.boolean().optional(),
    limit: z.int().min(1).max(50).optional(),
  })
  .optional();

const createBody = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    enabled: z.boolean().optional(),
  })
  .optional();

/** A key for a new definition of a preset. */
const newWorkflowKey = (presetKey: string) => `wf_${presetKey}_${randomBytes(4).toString("hex")}`;

/** Workflow keys, preset keys and recommendation ids are strings, not UUIDs (spec part 2). */
const keyString = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1 to 128 of A-Z a-z 0-9 _ -");
const definitionParams = z.strictObject({ workflow_key: keyString });
const schedule = z
  .string()
  .max(40)
  .refine((text) => parseSchedule(text) !== null, SCHEDULE_RULE);
const businessScope = z.enum(["operations", "operateurs"]);

const definitionCreateBody = z.strictObject({
  key: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9_-]{2,63}$/,
      "must be 3 to 64 of a-z 0-9 _ -, starting with a letter or digit",
    )
    .optional(),
  preset_key: z.string().min(1).max(80),
  name: z.string().trim().min(1).max(200),
  description: z.string().trim().min(1).max(2000).optional(),
  schedule: schedule.optional(),
  configuration: jsonObject.optional(),
  business_scope: businessScope.optional(),
});

const definitionUpdateBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  description: z.string().trim().min(1).max(2000).optional(),
  schedule: schedule.optional(),
  configuration: jsonObject.optional(),
  business_scope: businessScope.optional(),
});

function findDefinition(state: SandboxState, key: string): WorkflowDefinition {
  const definition = state.data.workflows.find((w) => w.key === key);
  if (!definition) throw notFound("workflow definition", key, "workflow_not_found");
  return definition;
}

/** A flag of the definition that forbids a change: 409 with its own reason code. */
function requireFlag(definition: WorkflowDefinition, allowed: boolean, what: string, code: string) {
  if (!allowed)
    throw new Problem(
      409,
      `Workflow ${definition.key} cannot be ${what}: the entity must keep it as it is.`,
      { reasonCode: code },
    );
}

const history = (
  state: SandboxState,
  definition: WorkflowDefinition,
  event: HistoryEvent,
  at: string,
  actor: string,
  details?: Record<string, string | string[] | boolean | null>,
) =>
  state.data.workflowHistory.push(
    historyEntry(randomUUID(), definition.key, event, at, actor, { details }),
  );

/** The moment an active definition runs next, from `nowMs`; none unless active. */
const nextRunOf = (definition: WorkflowDefinition, nowMs: number) =>
  definition.state === "active" ? nextRun(definition.schedule, nowMs) : null;

/** For the contract test: the first definition a change may apply to. */
function definitionWhere(test: (w: WorkflowDefinition, state: SandboxState) => boolean) {
  return ({ state }: { state: SandboxState }) => {
    const definition = state.data.workflows.find((w) => test(w, state));
    return definition ? { params: { workflow_key: definition.key } } : {};
  };
}

export const workflowRoutes = [
  defineRoute({
    id: "workflow_recommendations_preview",
    family: "workflows",
    method: "POST",
    path: "/workflows/recommendations/preview",
    // A POST that reads: the scope, not the verb, decides (spec part 1).
    scope: "workflows:read",
    kind: "read",
    summary: "Preview workflow recommendations",
    response: {
      status: 200,
      schema: component("WorkflowRecommendationList", pageOf(recommendationSchema)),
    },
    body: previewBody,
    handle({ body = {}, state }) {
      const wanted = body.operation_ids?.map((id) => id.toLowerCase());
      const items = state.data.recommendations.filter(
        (r) =>
          (body.include_applied || r.status !== "applied") &&
          (!body.preset_keys || body.preset_keys.includes(r.preset_key)) &&
          (!wanted || r.operation_ids.some((id) => wanted.includes(id))),
      );
      return json({ items: items.slice(0, body.limit ?? 20), total: items.length });
    },
  }),
  defineRoute({
    id: "workflow_create_from_recommendation",
    family: "workflows",
    method: "POST",
    path: "/workflows/recommendations/{recommendation_id}/workflow",
    scope: "workflows:write",
    kind: "write",
    summary: "Create a workflow from a validated recommendation",
    response: { status: 201, schema: workflowDefinitionSchema },
    refusals: {
      404: ["recommendation_not_found"],
      409: ["recommendation_not_validated", "recommendation_already_applied"],
    },
    example: ({ state }) => {
      const validated = state.data.recommendations.find((r) => r.status === "validated");
      return validated ? { params: { recommendation_id: validated.id } } : {};
    },
    params: z.strictObject({ recommendation_id: keyString }),
    body: createBody,
    handle({ params, body, state, key: apiKey, now }) {
      const rec = state.data.recommendations.find((r) => r.id === params.recommendation_id);
      if (!rec) {
        throw new Problem(404, `No recommendation ${params.recommendation_id}.`, {
          reasonCode: "recommendation_not_found",
        });
      }
      if (rec.status === "proposed") {
        throw new Problem(409, `Recommendation ${rec.id} has not been validated yet.`, {
          reasonCode: "recommendation_not_validated",
        });
      }
      if (rec.status === "applied") {
        throw new Problem(
          409,
          `Recommendation ${rec.id} already became workflow ${rec.applied_workflow_key}.`,
          {
            reasonCode: "recommendation_already_applied",
          },
        );
      }
      const key = newWorkflowKey(rec.preset_key);
      const workflow = workflowFromRecommendation(rec, key, body, new Date(now()).toISOString());
      state.data.workflows.push(workflow);
      history(
        state,
        workflow,
        "created",
        workflow.metadata.created_at as string,
        serviceAccount(apiKey),
        {
          recommendation_id: rec.id,
        },
      );
      rec.status = "applied";
      rec.applied_workflow_key = key;
      return json(workflow, 201);
    },
  }),
  defineRoute({
    id: "workflow_presets_list",
    family: "workflows",
    method: "GET",
    path: "/workflows/presets",
    scope: "workflows:read",
    kind: "read",
    summary: "List the workflow presets",
    query: z.strictObject({ ...pageQuery(100, 50) }),
    response: {
      status: 200,
      schema: component("WorkflowPresetList", pageOf(workflowPresetSchema)),
    },
    handle: ({ query, state }) => json(page(state.data.workflowPresets, query)),
  }),
  defineRoute({
    id: "workflow_preset_get",
    family: "workflows",
    method: "GET",
    path: "/workflows/presets/{preset_key}",
    scope: "workflows:read",
    kind: "read",
    summary: "Get a workflow preset",
    params: z.strictObject({ preset_key: keyString }),
    response: { status: 200, schema: workflowPresetSchema },
    refusals: { 404: ["workflow_preset_not_found"] },
    handle({ params, state }) {
      const preset = state.data.workflowPresets.find((p) => p.key === params.preset_key);
      if (!preset)
        throw notFound("workflow preset", params.preset_key, "workflow_preset_not_found");
      return json(preset);
    },
  }),
  defineRoute({
    id: "workflow_definitions_list",
    family: "workflows",
    method: "GET",
    path: "/workflows/definitions",
    scope: "workflows:read",
    kind: "read",
    summary: "List workflow definitions",
    description: "By name; those created from a recommendation included.",
    query: z.strictObject({
      state: z.enum(WORKFLOW_STATES).optional(),
      origin: z.enum(["system", "custom"]).optional(),
      preset_key: keyString.optional(),
      ...pageQuery(200, 50),
    }),
    response: {
      status: 200,
      schema: component("WorkflowDefinitionList", pageOf(workflowDefinitionSchema)),
    },
    handle({ query, state, now }) {
      settleWorkflows(state, now());
      const definitions = state.data.workflows
        .filter(
          (w) =>
            (query.state === undefined || w.state === query.state) &&
            (query.origin === undefined || w.origin === query.origin) &&
            (query.preset_key === undefined || w.preset_key === query.preset_key),
        )
        .sort((a, b) => a.name.localeCompare(b.name, "fr") || a.key.localeCompare(b.key));
      return json(page(definitions, query));
    },
  }),
  defineRoute({
    id: "workflow_definition_create",
    family: "workflows",
    method: "POST",
    path: "/workflows/definitions",
    scope: "workflows:write",
    kind: "write",
    summary: "Create a workflow definition from a preset",
    description:
      "A custom definition, in `draft` until it is enabled. Absent fields come from the preset; `configuration` is laid over the preset's default one.",
    body: definitionCreateBody,
    response: { status: 201, schema: workflowDefinitionSchema },
    refusals: { 409: ["workflow_key_taken"], 422: ["reference_not_found"] },
    example: () => ({
      body: { preset_key: "covenant_monitoring", name: "Covenants – financements mezzanine" },
    }),
    handle({ body, state, key, now }) {
      const preset = state.data.workflowPresets.find((p) => p.key === body.preset_key);
      if (!preset) {
        throw invalid(
          [
            {
              field: "preset_key",
              rule: "existing record",
              message: "names no preset of the catalogue",
            },
          ],
          "reference_not_found",
        );
      }
      const workflowKey = body.key ?? newWorkflowKey(preset.key);
      // A key stays its definition's for good: the history of a deleted one keeps it.
      if (state.data.workflowHistory.some((h) => h.workflow_key === workflowKey)) {
        throw new Problem(409, `The workflow key ${workflowKey} is already used.`, {
          reasonCode: "workflow_key_taken",
        });
      }
      const at = new Date(now()).toISOString();
      const author = serviceAccount(key);
      const scheduleText = body.schedule ?? preset.default_schedule;
      const definition: WorkflowDefinition = {
        key: workflowKey,
        name: body.name,
        description: body.description ?? preset.expected_effect,
        processing_family: preset.processing_family,
        schedule: scheduleText,
        enabled: false,
        is_custom: true,
        is_editable: true,
        is_deletable: true,
        can_toggle: true,
        origin: "custom",
        business_scope: body.business_scope ?? preset.business_scope,
        expected_effect: preset.expected_effect,
        processing_types: [...preset.processing_types],
        preset_key: preset.key,
        state: "draft",
        schedule_mode: scheduleMode(scheduleText),
        configuration: { ...preset.default_configuration, ...body.configuration },
        metadata: { created_from: "preset", created_at: at, created_by: author },
        last_run_at: null,
        next_run_at: null,
        last_error: null,
      };
      state.data.workflows.push(definition);
      history(state, definition, "created", at, author);
      return json(definition, 201);
    },
  }),
  defineRoute({
    id: "workflow_definition_get",
    family: "workflows",
    method: "GET",
    path: "/workflows/definitions/{workflow_key}",
    scope: "workflows:read",
    kind: "read",
    summary: "Get a workflow definition",
    params: definitionParams,
    response: { status: 200, schema: workflowDefinitionSchema },
    refusals: { 404: ["workflow_not_found"] },
    handle({ params, state, now }) {
      settleWorkflows(state, now());
      return json(findDefinition(state, params.workflow_key));
    },
  }),
  defineRoute({
    id: "workflow_definition_update",
    family: "workflows",
    method: "PATCH",
    path: "/workflows/definitions/{workflow_key}",
    scope: "workflows:write",
    kind: "write",
    summary: "Change a workflow definition",
    description:
      "Absent fields are left as they are; `configuration` is replaced whole. Changing a definition in `error` repairs it: it becomes `inactive`, to be enabled again.",
    params: definitionParams,
    body: definitionUpdateBody,
    response: { status: 200, schema: workflowDefinitionSchema },
    refusals: { 404: ["workflow_not_found"], 409: ["workflow_not_editable"] },
    example: (ctx) => ({
      ...definitionWhere((w) => w.is_editable)(ctx),
      body: { description: "Revue hebdomadaire avant le comité des risques." },
    }),
    handle({ params, body, state, key, now }) {
      const nowMs = now();
      settleWorkflows(state, nowMs);
      const definition = findDefinition(state, params.workflow_key);
      requireFlag(definition, definition.is_editable, "changed", "workflow_not_editable");
      const changes = sentFields(body);
      Object.assign(definition, changes);
      if (changes.schedule !== undefined) definition.schedule_mode = scheduleMode(changes.schedule);
      if (definition.state === "error")
        Object.assign(definition, { state: "inactive", enabled: false, last_error: null });
      definition.next_run_at = nextRunOf(definition, nowMs);
      history(state, definition, "updated", new Date(nowMs).toISOString(), serviceAccount(key), {
        fields: Object.keys(changes),
      });
      return json(definition);
    },
  }),
  defineRoute({
    id: "workflow_definition_delete",
    family: "workflows",
    method: "DELETE",
    path: "/workflows/definitions/{workflow_key}",
    scope: "workflows:write",
    kind: "write",
    summary: "Delete a workflow definition",
    description: "Not while it is active (disable it first). Its executions and history remain.",
    params: definitionParams,
    response: { status: 204 },
    refusals: {
      404: ["workflow_not_found"],
      409: ["invalid_transition", "workflow_not_deletable"],
    },
    example: definitionWhere((w) => w.is_deletable && WORKFLOW_MOVES.delete.includes(w.state)),
    handle({ params, state, key, now }) {
      const nowMs = now();
      settleWorkflows(state, nowMs);
      const definition = findDefinition(state, params.workflow_key);
      requireFlag(definition, definition.is_deletable, "deleted", "workflow_not_deletable");
      assertTransition(WORKFLOW_MOVES, "delete", definition.state, `Workflow ${definition.key}`);
      state.data.workflows.splice(state.data.workflows.indexOf(definition), 1);
      history(state, definition, "deleted", new Date(nowMs).toISOString(), serviceAccount(key));
      return { status: 204 };
    },
  }),
  defineRoute({
    id: "workflow_definition_toggle",
    family: "workflows",
    method: "POST",
    path: "/workflows/definitions/{workflow_key}/toggle",
    scope: "workflows:write",
    kind: "write",
    summary: "Enable or disable a workflow definition",
    description:
      "`enabled: true` makes a draft or inactive definition active (scheduled again); `enabled: false` makes an active or failing one inactive.",
    params: definitionParams,
    body: z.strictObject({ enabled: z.boolean() }),
    response: { status: 200, schema: workflowDefinitionSchema },
    refusals: {
      404: ["workflow_not_found"],
      409: ["invalid_transition", "workflow_not_toggleable"],
    },
    example: (ctx) => ({
      ...definitionWhere((w) => w.can_toggle && WORKFLOW_MOVES.enable.includes(w.state))(ctx),
      body: { enabled: true },
    }),
    handle({ params, body, state, key, now }) {
      const nowMs = now();
      settleWorkflows(state, nowMs);
      const definition = findDefinition(state, params.workflow_key);
      requireFlag(
        definition,
        definition.can_toggle,
        "enabled or disabled",
        "workflow_not_toggleable",
      );
      const move = body.enabled ? "enable" : "disable";
      assertTransition(WORKFLOW_MOVES, move, definition.state, `Workflow ${definition.key}`);
      Object.assign(definition, {
        state: body.enabled ? "active" : "inactive",
        enabled: body.enabled,
        last_error: null,
      });
      definition.next_run_at = nextRunOf(definition, nowMs);
      history(
        state,
        definition,
        body.enabled ? "enabled" : "disabled",
        new Date(nowMs).toISOString(),
        serviceAccount(key),
      );
      return json(definition);
    },
  }),
  defineRoute({
    id: "workflow_run",
    family: "workflows",
    method: "POST",
    path: "/workflows/definitions/{workflow_key}/executions",
    scope: "workflows:write",
    kind: "write",
    summary: "Run a workflow definition now",
    description:
      "Queues an execution of an active or inactive definition; one at a time per definition. It is queued, then running, then succeeded or failed a few seconds later.",
    params: definitionParams,
    body: z.strictObject({ comment: z.string().trim().min(1).max(500).optional() }).optional(),
    response: { status: 202, schema: workflowExecutionSchema },
    refusals: {
      404: ["workflow_not_found"],
      409: ["invalid_transition", "workflow_execution_in_progress"],
    },
    example: definitionWhere(
      (w, state) =>
        WORKFLOW_MOVES.run.includes(w.state) &&
        !state.data.workflowExecutions.some((e) => e.workflow_key === w.key && !e.settled),
    ),
    handle({ params, body, state, key, now }) {
      const nowMs = now();
      settleWorkflows(state, nowMs);
      const definition = findDefinition(state, params.workflow_key);
      assertTransition(WORKFLOW_MOVES, "run", definition.state, `Workflow ${definition.key}`);
      const running = state.data.workflowExecutions.find(
        (e) =>
          e.workflow_key === definition.key &&
          ["queued", "running"].includes(executionStatus(e, nowMs)),
      );
      if (running) {
        throw new Problem(
          409,
          `Workflow ${definition.key} is already running (execution ${running.id}).`,
          {
            reasonCode: "workflow_execution_in_progress",
          },
        );
      }
      const execution = queueExecution(
        state.data,
        definition,
        {
          id: randomUUID(),
          trigger: "manual",
          by: serviceAccount(key),
          at: new Date(nowMs).toISOString(),
          comment: body?.comment,
        },
        randomUUID(),
      );
      return json(publishedExecution(execution, nowMs), 202);
    },
  }),
  defineRoute({
    id: "workflow_executions_list",
    family: "workflows",
    method: "GET",
    path: "/workflows/executions",
    scope: "workflows:read",
    kind: "read",
    summary: "List workflow executions, newest first",
    query: z.strictObject({
      workflow_key: keyString.optional(),
      status: z.enum(EXECUTION_STATUSES).optional(),
      trigger: z.enum(["manual", "schedule"]).optional(),
      ...pageQuery(200, 50),
    }),
    response: {
      status: 200,
      schema: component("WorkflowExecutionList", pageOf(workflowExecutionSchema)),
    },
    handle({ query, state, now }) {
      const nowMs = now();
      settleWorkflows(state, nowMs);
      const executions = state.data.workflowExecutions
        .map((e) => publishedExecution(e, nowMs))
        .filter(
          (e) =>
            (query.workflow_key === undefined || e.workflow_key === query.workflow_key) &&
            (query.status === undefined || e.status === query.status) &&
            (query.trigger === undefined || e.trigger === query.trigger),
        )
        .sort((a, b) => b.queued_at.localeCompare(a.queued_at) || a.id.localeCompare(b.id));
      return json(page(executions, query));
    },
  }),
  defineRoute({
    id: "workflow_execution_get",
    family: "workflows",
    method: "GET",
    path: "/workflows/executions/{execution_id}",
    scope: "workflows:read",
    kind: "read",
    summary: "Get a workflow execution",
    params: z.strictObject({ execution_id: uuid }),
    response: { status: 200, schema: workflowExecutionSchema },
    refusals: { 404: ["workflow_execution_not_found"] },
    handle({ params, state, now }) {
      const nowMs = now();
      settleWorkflows(state, nowMs);
      const execution = state.data.workflowExecutions.find(
        (e) => e.id === params.execution_id.toLowerCase(),
      );
      if (!execution)
        throw notFound("workflow execution", params.execution_id, "workflow_execution_not_found");
      return json(publishedExecution(execution, nowMs));
    },
  }),
  defineRoute({
    id: "workflow_history_list",
    family: "workflows",
    method: "GET",
    path: "/workflows/history",
    scope: "workflows:read",
    kind: "read",
    summary: "List what happened to workflow definitions, newest first",
    description:
      "Creations, changes, enabling, runs and their results, deletions: deleted definitions included.",
    query: z.strictObject({
      workflow_key: keyString.optional(),
      event: z.enum(HISTORY_EVENTS).optional(),
      ...pageQuery(200, 50),
    }),
    response: {
      status: 200,
      schema: component("WorkflowHistoryList", pageOf(workflowHistorySchema)),
    },
    handle({ query, state, now }) {
      settleWorkflows(state, now());
      // Newest first; two events of the same millisecond (a disable, then the deletion) in the
      // order they happened, not by their random ids.
      const entries = state.data.workflowHistory
        .map((entry, order) => ({ entry, order }))
        .filter(
          ({ entry: h }) =>
            (query.workflow_key === undefined || h.workflow_key === query.workflow_key) &&
            (query.event === undefined || h.event === query.event),
        )
        .sort((a, b) => b.entry.at.localeCompare(a.entry.at) || b.order - a.order)
        .map(({ entry }) => entry);
      return json(page(entries, query));
    },
  }),
];
