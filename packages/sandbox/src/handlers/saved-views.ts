import { randomUUID } from "node:crypto";
import { z } from "zod";
import { component, type JsonObject, jsonObject, pageOf } from "../models/common.js";
import {
  type SavedView,
  type SavedViewType,
  type SortKey,
  savedViewSchema,
  VIEW_TYPES,
} from "../models/delegated.js";
import { type FieldError, invalid, notFound } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import { uuid } from "../validation.js";

// Spec part 2, saved views. The token lists and allowlists are the sandbox's (see README).
export const VIEW_ICONS = [
  "star",
  "folder",
  "chart",
  "building",
  "briefcase",
  "flag",
  "calendar",
  "bell",
] as const;
export const VIEW_COLORS = [
  "slate",
  "blue",
  "green",
  "amber",
  "red",
  "purple",
  "teal",
  "pink",
] as const;

export const VIEW_FILTER_KEYS: Record<SavedViewType, readonly string[]> = {
  operations: [
    "preset",
    "search",
    "statut",
    "statut_interne",
    "statut_operationnel",
    "cycle_interne",
    "classe_actif",
    "type_investissement",
    "operateur_id",
  ],
  deals: ["preset", "search", "status", "classe_actif", "operateur_id", "responsable"],
  operateurs: ["preset", "search", "type", "litiges_en_cours", "responsable_interne"],
};

export const VIEW_COLUMNS: Record<SavedViewType, readonly string[]> = {
  operations: [
    "name",
    "statut",
    "phase",
    "statut_interne",
    "statut_operationnel",
    "classe_actif",
    "sous_classe_actif",
    "type_investissement",
    "type_operation",
    "spv",
    "operateur",
    "montant_engage",
    "montant_appele",
    "encours",
    "taux_annuel",
    "date_echeance",
    "ville",
    "taux_commercialisation",
    "updated_at",
  ],
  deals: [
    "name",
    "status",
    "montant_estime",
    "classe_actif",
    "operateur",
    "responsable",
    "date_sourcing",
    "date_closing_prevue",
    "updated_at",
  ],
  operateurs: [
    "name",
    "siren",
    "type",
    "reputation_gouvernance_score",
    "litiges_en_cours",
    "responsable_interne",
    "updated_at",
  ],
};

const VIEW_STATE_MAX_BYTES = 16_384;

const viewFields = {
  filters: jsonObject.optional(),
  columns: z.array(z.string().max(64)).max(64).optional(),
  sort: z
    .array(z.strictObject({ sort_by: z.string().max(64), sort_order: z.enum(["asc", "desc"]) }))
    .max(4)
    .optional(),
  icon: z.enum(VIEW_ICONS).nullish(),
  color: z.enum(VIEW_COLORS).nullish(),
  is_default: z.boolean().optional(),
};

const createViewBody = z.strictObject({
  name: z.string().max(500),
  type: z.enum(VIEW_TYPES),
  ...viewFields,
});
const updateViewBody = z.strictObject({
  name: z.string().max(500).optional(),
  type: z.enum(VIEW_TYPES).optional(),
  ...viewFields,
});

/** Names are normalised (trimmed, inner spaces collapsed) and must stay non-empty. */
function normaliseViewName(name: string): string {
  const normalised = name.trim().replace(/\s+/g, " ");
  if (!normalised)
    throw invalid([
      { field: "name", rule: "non-empty after normalisation", message: "must not be blank" },
    ]);
  if (normalised.length > 120)
    throw invalid([
      { field: "name", rule: "max length 120", message: "must be at most 120 characters" },
    ]);
  return normalised;
}

/** The state rules of spec part 2: size, key counts, and the allowlists of the view's type. */
function checkViewState(
  type: SavedViewType,
  filters: JsonObject,
  columns: string[],
  sort: SortKey[],
): void {
  const errors: FieldError[] = [];
  const bytes = Buffer.byteLength(JSON.stringify({ filters, columns, sort }));
  if (bytes > VIEW_STATE_MAX_BYTES) {
    errors.push({
      field: "filters",
      rule: `max ${VIEW_STATE_MAX_BYTES} bytes`,
      message: `filters, columns and sort take ${bytes} bytes of JSON; the limit is ${VIEW_STATE_MAX_BYTES}`,
    });
  }
  const keys = Object.keys(filters);
  if (keys.length > 24)
    errors.push({
      field: "filters",
      rule: "max 24 keys",
      message: `has ${keys.length} keys; the limit is 24`,
    });
  for (const key of keys) {
    if (type === "operations" && key === "status") {
      errors.push({
        field: "filters.status",
        rule: "unknown filter key",
        message: "is not accepted for operations views; use statut",
      });
    } else if (!VIEW_FILTER_KEYS[type].includes(key)) {
      errors.push({
        field: `filters.${key}`,
        rule: "unknown filter key",
        message: `is not a filter of ${type} views (${VIEW_FILTER_KEYS[type].join(", ")})`,
      });
    }
  }
  columns.forEach((column, i) => {
    if (!VIEW_COLUMNS[type].includes(column)) {
      errors.push({
        field: `columns[${i}]`,
        rule: "allowed column",
        message: `${column} is not a column of ${type} views`,
      });
    }
  });
  sort.forEach((key, i) => {
    if (!VIEW_COLUMNS[type].includes(key.sort_by)) {
      errors.push({
        field: `sort[${i}].sort_by`,
        rule: "allowed sort field",
        message: `${key.sort_by} is not sortable in ${type} views`,
      });
    }
  });
  if (errors.length > 0) throw invalid(errors);
}

const viewParams = z.strictObject({ view_id: uuid });

function ownView(views: SavedView[], userId: string, viewId: string): SavedView {
  // Another user's view is reported as missing: its existence is not the caller's business.
  const view = views.find((v) => v.id === viewId.toLowerCase() && v.user_id === userId);
  if (!view) throw notFound("saved view", viewId, "saved_view_not_found");
  return view;
}

export const savedViewRoutes = [
  defineRoute({
    id: "saved_views_list",
    family: "delegated",
    method: "GET",
    path: "/users/me/saved-views",
    scope: "users:read",
    kind: "read",
    capability: "saved_views",
    summary: "List the delegated user's saved views",
    response: { status: 200, schema: component("SavedViewList", pageOf(savedViewSchema)) },
    handle({ user, state }) {
      const views = state.data.savedViews.filter((v) => v.user_id === user?.id);
      return json({ items: views, total: views.length });
    },
  }),
  defineRoute({
    id: "saved_view_create",
    family: "delegated",
    method: "POST",
    path: "/users/me/saved-views",
    scope: "users:write",
    kind: "write",
    capability: "saved_views",
    summary: "Create a saved view",
    response: { status: 201, schema: savedViewSchema },
    example: () => ({ body: { name: "Opérations en travaux", type: "operations" } }),
    body: createViewBody,
    handle({ body, user, state, now }) {
      const name = normaliseViewName(body.name);
      const filters = body.filters ?? {};
      const columns = body.columns ?? [];
      const sort = body.sort ?? [];
      checkViewState(body.type, filters, columns, sort);
      const at = new Date(now()).toISOString();
      const view: SavedView = {
        id: randomUUID(),
        user_id: user?.id ?? "",
        name,
        type: body.type,
        filters,
        columns,
        sort,
        icon: body.icon ?? null,
        color: body.color ?? null,
        is_default: body.is_default ?? false,
        created_at: at,
        updated_at: at,
      };
      state.data.savedViews.push(view);
      return json(view, 201);
    },
  }),
  defineRoute({
    id: "saved_view_update",
    family: "delegated",
    method: "PATCH",
    path: "/users/me/saved-views/{view_id}",
    scope: "users:write",
    kind: "write",
    capability: "saved_views",
    summary: "Change a saved view",
    description: "Absent fields are left as they are; the view keeps its type.",
    response: { status: 200, schema: savedViewSchema },
    refusals: { 404: ["saved_view_not_found"] },
    example: () => ({ body: { name: "Vue renommée" } }),
    params: viewParams,
    body: updateViewBody,
    handle({ params, body, user, state, now }) {
      const view = ownView(state.data.savedViews, user?.id ?? "", params.view_id);
      if (Object.keys(body).length === 0) {
        throw invalid([
          { field: "body", rule: "min 1 field", message: "send at least one field to change" },
        ]);
      }
      if (body.type !== undefined && body.type !== view.type) {
        throw invalid([
          {
            field: "type",
            rule: "immutable",
            message: `updates stay bound to the stored type (${view.type})`,
          },
        ]);
      }
      // Absent means unchanged; null clears a nullable field (spec part 2, conventions).
      const next = {
        name: body.name === undefined ? view.name : normaliseViewName(body.name),
        filters: body.filters ?? view.filters,
        columns: body.columns ?? view.columns,
        sort: body.sort ?? view.sort,
        icon: body.icon === undefined ? view.icon : body.icon,
        color: body.color === undefined ? view.color : body.color,
        is_default: body.is_default ?? view.is_default,
      };
      checkViewState(view.type, next.filters, next.columns, next.sort);
      Object.assign(view, next, { updated_at: new Date(now()).toISOString() });
      return json(view);
    },
  }),
  defineRoute({
    id: "saved_view_get",
    family: "delegated",
    method: "GET",
    path: "/users/me/saved-views/{view_id}",
    scope: "users:read",
    kind: "read",
    capability: "saved_views",
    summary: "Get one of the delegated user's saved views",
    params: viewParams,
    response: { status: 200, schema: savedViewSchema },
    refusals: { 404: ["saved_view_not_found"] },
    handle: ({ params, user, state }) =>
      json(ownView(state.data.savedViews, user?.id ?? "", params.view_id)),
  }),
  defineRoute({
    id: "saved_view_delete",
    family: "delegated",
    method: "DELETE",
    path: "/users/me/saved-views/{view_id}",
    scope: "users:write",
    kind: "write",
    capability: "saved_views",
    summary: "Delete a saved view",
    params: viewParams,
    response: { status: 204 },
    refusals: { 404: ["saved_view_not_found"] },
    handle({ params, user, state }) {
      const views = state.data.savedViews;
      views.splice(views.indexOf(ownView(views, user?.id ?? "", params.view_id)), 1);
      return { status: 204 };
    },
  }),
];
