import { z } from "zod";
import { CATALOGUE } from "../api/catalogue.js";
import { asListPage, record, withoutShareTokens } from "../api/response.js";
import { UserFacingError } from "../errors.js";
import { fitToBudget, listOutput } from "../toolkit/budget.js";
import { type Domain, defineTool, READ_ONLY } from "../toolkit/definitions.js";
import { detail } from "../toolkit/present.js";
import { listOf } from "../toolkit/read-tools.js";
import { given, lookUp } from "../toolkit/write-tools.js";
import { quote } from "../writes/display.js";
import { outcomeSchema } from "../writes/outcome.js";

const q = CATALOGUE;
const previewBody = q.workflow_recommendations_preview.body.unwrap();

/** Workflows: recommendations to read, and workflows made from the validated ones. */
export const workflows: Domain = {
  tools: [
    defineTool({
      kind: "run",
      name: "preview_workflow_recommendations",
      title: "Preview workflow recommendations",
      description:
        "Workflow recommendations for the portfolio (a read; nothing is created). Filter by operation_ids or preset_keys; include_applied adds those already turned into workflows.",
      family: "workflows",
      annotations: READ_ONLY,
      operations: ["workflow_recommendations_preview"],
      input: z.strictObject(previewBody.shape),
      output: listOf(detail),
      async run(args, ctx) {
        const body = Object.keys(args).length > 0 ? args : undefined;
        const page = asListPage(
          (await ctx.api.call("workflow_recommendations_preview", { body }, { signal: ctx.signal }))
            .data,
        );
        const items = page.items.map((raw) => withoutShareTokens(record(raw)));
        const { list, text } = fitToBudget(
          listOutput(items, page.total, 0),
          "filter by operation_ids",
        );
        return { structured: list, text };
      },
    }),
    defineTool({
      kind: "draft",
      name: "create_workflow_from_recommendation",
      title: "Create a workflow from a recommendation",
      description:
        "Drafts a workflow from a validated recommendation (preview_workflow_recommendations); created once the user confirms.",
      family: "workflows",
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true,
      },
      operations: ["workflow_recommendations_preview", "workflow_create_from_recommendation"],
      writes: ["workflow_create_from_recommendation"],
      output: outcomeSchema,
      input: z.strictObject({
        recommendation_id: q.workflow_create_from_recommendation.params.shape.recommendation_id,
        ...q.workflow_create_from_recommendation.body.unwrap().shape,
      }),
      async draft(args, ctx) {
        const recommendations = asListPage(
          await lookUp(ctx, "workflow_recommendations_preview", {
            body: { include_applied: true, limit: 50 },
          }),
        ).items.map(record);
        const rec = recommendations.find((r) => r.id === args.recommendation_id);
        if (!rec)
          throw new UserFacingError(
            `No recommendation ${args.recommendation_id}; nothing was drafted.`,
          );
        const body = given(args, ["name", "enabled"]);
        return {
          path: { recommendation_id: args.recommendation_id },
          body: Object.keys(body).length > 0 ? body : undefined,
          preview: {
            action: "Create a workflow",
            target: `from recommendation ${quote(String(rec.title ?? rec.id))} (${args.recommendation_id})`,
            fields: body,
            billable: false,
          },
        };
      },
    }),
  ],
};
