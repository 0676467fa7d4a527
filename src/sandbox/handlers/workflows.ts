import { randomBytes } from "node:crypto";
import { z } from "zod";
import { workflowFromRecommendation } from "../data/demo.js";
import { component, pageOf } from "../models/common.js";
import { recommendationSchema, workflowDefinitionSchema } from "../models/workflows.js";
import { Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import { uuid } from "../validation.js";

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
    params: z.strictObject({
      recommendation_id: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1 to 128 of A-Z a-z 0-9 _ -"),
    }),
    body: createBody,
    handle({ params, body, state, now }) {
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
      const key = `wf_${rec.preset_key}_${randomBytes(4).toString("hex")}`;
      const workflow = workflowFromRecommendation(rec, key, body, new Date(now()).toISOString());
      state.data.workflows.push(workflow);
      rec.status = "applied";
      rec.applied_workflow_key = key;
      return json(workflow, 201);
    },
  }),
];
