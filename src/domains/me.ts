import { fieldPath } from "@portfolio-mcp/field-errors";
import { z } from "zod";
import { CATALOGUE } from "../api/catalogue.js";
import { asListPage, record } from "../api/response.js";
import {
  normaliseViewName,
  VIEW_COLORS,
  VIEW_ICONS,
  VIEW_TYPES,
  type ViewType,
  viewStateIssues,
} from "../api/schemas.js";
import { invalidArguments, UserFacingError } from "../errors.js";
import { type Domain, defineTool } from "../toolkit/definitions.js";
import { jsonObject, jsonText } from "../toolkit/json-text.js";
import { dashboardRows, savedViewRows } from "../toolkit/present.js";
import { detailTool, listTool } from "../toolkit/read-tools.js";
import { CREATES, given, lookUp } from "../toolkit/write-tools.js";
import { quote } from "../writes/display.js";
import { outcomeSchema } from "../writes/outcome.js";

const q = CATALOGUE;
const dashboardFields = Object.keys(q.custom_dashboard_create.body.shape);
const viewFields = ["name", "type", "filters", "columns", "sort", "icon", "color", "is_default"];

/** The free-form parts of a dashboard, as JSON text (toolkit/json-text.ts). */
const dashboardInput = z.strictObject({
  ...q.custom_dashboard_create.body.shape,
  layout: jsonText(z.array(jsonObject).max(50), "JSON array of widgets (at most 50).").optional(),
  filters: jsonText(jsonObject, "JSON object.").optional(),
  default_scope: jsonText(jsonObject, "JSON object.").optional(),
});

const viewBody = q.saved_view_create.body.shape;
/** A view's filters, as JSON text: their keys depend on the view's type. */
const viewFilters = jsonText(
  jsonObject,
  "JSON object, at most 24 keys of the view's type (operations views take statut, not status).",
).optional();
/** The view's rules of state (type, filters, columns, sort), each refusal naming its field. */
function checkView(view: Parameters<typeof viewStateIssues>[0], ctx: z.RefinementCtx) {
  for (const issue of viewStateIssues(view)) ctx.addIssue({ code: "custom", ...issue });
}
/** An icon or colour that may be cleared: the API clears it on null, which here means absent. */
const clearable = <const T extends readonly [string, ...string[]]>(values: T, what: string) =>
  z
    .enum([...values, "none"])
    .optional()
    .describe(`"none" clears the ${what}.`);
const cleared = (value: string | undefined) => (value === "none" ? null : value);

/** The delegated user's own things (spec part 5: /users/me*): profile, views, dashboards. */
export const me: Domain = {
  tools: [
    detailTool({
      name: "get_my_profile",
      title: "My profile",
      description: "The profile and preferences of the user this server acts for.",
      family: "me",
      operation: "me_get",
      toRequest: () => ({}),
    }),
    listTool({
      name: "list_my_saved_views",
      title: "My saved views",
      description: "The saved views of the user this server acts for (filters, columns).",
      family: "me",
      operation: "saved_views_list",
      item: savedViewRows.item,
      present: savedViewRows.present,
      local: {
        shape: { type: z.enum(VIEW_TYPES).optional().describe("Only views of this type.") },
        keep: ({ type }) => (type === undefined ? null : (raw) => record(raw).type === type),
      },
      pageable: false,
      narrowHint: "none",
    }),
    listTool({
      name: "list_my_dashboards",
      title: "My dashboards",
      description: "The custom dashboards of the user this server acts for.",
      family: "me",
      operation: "custom_dashboards_list",
      item: dashboardRows.item,
      present: dashboardRows.present,
      local: {
        shape: {
          shared: z
            .boolean()
            .optional()
            .describe("true: only those shared by link; false: the others."),
        },
        keep: ({ shared }) =>
          shared === undefined ? null : (raw) => (record(raw).is_shared === true) === shared,
      },
      pageable: false,
      narrowHint: "none",
    }),
    defineTool({
      kind: "draft",
      name: "create_custom_dashboard",
      title: "Create a custom dashboard",
      description:
        "Drafts a custom dashboard for the user this server acts for, created once the user confirms.",
      family: "me",
      annotations: CREATES,
      operations: ["custom_dashboard_create"],
      writes: ["custom_dashboard_create"],
      output: outcomeSchema,
      input: dashboardInput,
      draft: async (args) => {
        const body = given(args, dashboardFields);
        return {
          path: {},
          body,
          preview: {
            action: "Create a custom dashboard",
            target: `dashboard ${quote(args.name)}`,
            fields: body,
            billable: false,
          },
        };
      },
    }),
    defineTool({
      kind: "draft",
      name: "create_saved_view",
      title: "Create a saved view",
      description:
        "Drafts a saved view (filters, columns, sort) for the user this server acts for, created once the user confirms.",
      family: "me",
      annotations: CREATES,
      operations: ["saved_view_create"],
      writes: ["saved_view_create"],
      output: outcomeSchema,
      input: z.strictObject({ ...viewBody, filters: viewFilters }).superRefine(checkView),
      draft: async (args) => {
        const body = given(args, viewFields);
        return {
          path: {},
          body,
          preview: {
            action: "Create a saved view",
            target: `${args.type} view ${quote(normaliseViewName(args.name))}`,
            fields: body,
            billable: false,
          },
        };
      },
    }),
    defineTool({
      kind: "draft",
      name: "update_saved_view",
      title: "Update a saved view",
      description:
        "Drafts a change to one of the user's saved views (only the fields given), made once the user confirms.",
      family: "me",
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: true,
      },
      operations: ["saved_views_list", "saved_view_update"],
      writes: ["saved_view_update"],
      output: outcomeSchema,
      input: z
        .strictObject({
          view_id: q.saved_view_update.params.shape.view_id,
          ...q.saved_view_update.body.shape,
          filters: viewFilters,
          icon: clearable(VIEW_ICONS, "icon"),
          color: clearable(VIEW_COLORS, "colour"),
        })
        .refine((a) => Object.keys(a).some((k) => k !== "view_id"), {
          path: ["view_id"],
          message: "needs at least one field to change beside it",
        }),
      async draft(input, ctx) {
        const args = { ...input, icon: cleared(input.icon), color: cleared(input.color) };
        const views = asListPage(await lookUp(ctx, "saved_views_list", {})).items.map(record);
        const current = views.find(
          (v) => String(v.id).toLowerCase() === args.view_id.toLowerCase(),
        );
        if (!current)
          throw new UserFacingError(
            `The user has no saved view ${args.view_id}; nothing was drafted.`,
          );
        checkAgainstStoredType(args, current.type);
        const body = given(args, viewFields);
        return {
          path: { view_id: args.view_id },
          body,
          preview: {
            action: "Update a saved view",
            target: `view ${quote(String(current.name))} (${args.view_id})`,
            fields: body,
            billable: false,
          },
        };
      },
    }),
  ],
  resources: [
    {
      name: "me",
      title: "My profile",
      description: "The delegated user's profile and preferences.",
      family: "me",
      uri: "portfolio://me",
      tool: "get_my_profile",
      mimeType: "application/json",
    },
    {
      name: "my-saved-views",
      title: "My saved views",
      description: "The delegated user's saved views.",
      family: "me",
      uri: "portfolio://me/saved-views",
      tool: "list_my_saved_views",
      mimeType: "application/json",
    },
    {
      name: "my-dashboards",
      title: "My dashboards",
      description: "The delegated user's custom dashboards.",
      family: "me",
      uri: "portfolio://me/custom-dashboards",
      tool: "list_my_dashboards",
      mimeType: "application/json",
    },
  ],
};

/**
 * Updates stay bound to the stored view's type (spec part 2): the type cannot change, and the
 * filters, columns and sort given must be the stored type's.
 */
function checkAgainstStoredType(
  args: { type?: string } & Record<string, unknown>,
  stored: unknown,
) {
  if (!(VIEW_TYPES as readonly unknown[]).includes(stored)) return; // the API will judge
  const type = stored as ViewType;
  const errors = viewStateIssues({ ...(args as object), type }).map((issue) => ({
    field: fieldPath(issue.path),
    rule: "view type",
    message: issue.message,
  }));
  if (args.type !== undefined && args.type !== type)
    errors.unshift({
      field: "type",
      rule: "stored type",
      message: `must stay ${type}: a view keeps the type it was created with`,
    });
  if (errors.length > 0)
    throw new UserFacingError(invalidArguments("update_saved_view", errors, "drafted"));
}
