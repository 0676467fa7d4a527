import { randomBytes, randomUUID } from "node:crypto";
import { z } from "zod";
import { DEMO_USERS } from "../data/users.js";
import { component, jsonObject, pageOf } from "../models/common.js";
import { type Dashboard, dashboardSchema } from "../models/delegated.js";
import { type FieldError, invalid, notFound } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { uuid } from "../validation.js";
import { sentFields } from "./patch.js";

/** Spec part 2 leaves DashboardSharing's fields open: these are the sandbox's (README). */
const VISIBILITIES = ["private", "members", "entity"] as const;
const PERMISSIONS = ["view", "edit"] as const;

const dashboardParams = z.strictObject({ dashboard_id: uuid });

const updateBody = z.strictObject({
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(2000).nullish(),
  layout: z.array(jsonObject).max(50).optional(),
  filters: jsonObject.optional(),
  default_scope: jsonObject.nullish(),
});

const sharingBody = z.strictObject({
  visibility: z.enum(VISIBILITIES),
  permissions: z.array(z.enum(PERMISSIONS)).max(PERMISSIONS.length).optional(),
  members: z.array(z.string().min(1).max(128)).max(50).optional(),
});
type SharingBody = z.output<typeof sharingBody>;

/** A link token: provisioned, never published by clients (spec part 2). */
const newShareToken = () => `shr_${randomBytes(24).toString("base64url")}`;

function ownDashboard(state: SandboxState, userId: string, id: string): Dashboard {
  // Another user's dashboard is reported as missing, as for saved views.
  const dashboard = state.data.dashboards.find(
    (d) => d.id === id.toLowerCase() && d.user_id === userId,
  );
  if (!dashboard) throw notFound("custom dashboard", id, "custom_dashboard_not_found");
  return dashboard;
}

/**
 * The sharing rules: `private` shares with nobody; `members` with the users listed (other users
 * of the entity, at least one); `entity` with every user. Members may view, or view and edit.
 */
function checkSharing(state: SandboxState, ownerId: string, body: SharingBody): void {
  const members = body.members ?? [];
  const errors: FieldError[] = [];
  if (body.visibility !== "members" && members.length > 0)
    errors.push({
      field: "members",
      rule: "empty unless visibility is members",
      message: `must be empty when visibility is ${body.visibility}`,
    });
  if (body.visibility === "members" && members.length === 0)
    errors.push({
      field: "members",
      rule: "min 1 item when visibility is members",
      message: "name at least one user to share with",
    });
  if (body.visibility === "private" && (body.permissions ?? []).length > 0)
    errors.push({
      field: "permissions",
      rule: "empty when visibility is private",
      message: "a private dashboard grants nothing",
    });
  members.forEach((id, i) => {
    const member = state.data.users.find((u) => u.id === id);
    if (id === ownerId)
      errors.push({
        field: `members[${i}]`,
        rule: "not the owner",
        message: "the owner always has the dashboard",
      });
    else if (!member || member.erased_at !== null)
      errors.push({
        field: `members[${i}]`,
        rule: "existing record",
        message: "names no user of this entity",
      });
  });
  if (errors.length > 0) throw invalid(errors);
}

export const dashboardRoutes = [
  defineRoute({
    id: "custom_dashboards_list",
    family: "delegated",
    method: "GET",
    path: "/users/me/custom-dashboards",
    scope: "users:read",
    kind: "read",
    capability: "custom_dashboards",
    summary: "List the delegated user's dashboards",
    response: { status: 200, schema: component("CustomDashboardList", pageOf(dashboardSchema)) },
    handle({ user, state }) {
      const dashboards = state.data.dashboards.filter((d) => d.user_id === user?.id);
      return json({ items: dashboards, total: dashboards.length });
    },
  }),
  defineRoute({
    id: "custom_dashboard_create",
    family: "delegated",
    method: "POST",
    path: "/users/me/custom-dashboards",
    scope: "users:write",
    kind: "write",
    capability: "custom_dashboards",
    summary: "Create a custom dashboard",
    response: { status: 201, schema: dashboardSchema },
    body: z.strictObject({
      name: z.string().min(1).max(200),
      description: z.string().max(2000).nullish(),
      layout: z.array(jsonObject).max(50).optional(),
      filters: jsonObject.optional(),
      default_scope: jsonObject.optional(),
    }),
    handle({ body, user, state, now }) {
      const at = new Date(now()).toISOString();
      const dashboard: Dashboard = {
        id: randomUUID(),
        name: body.name,
        description: body.description ?? null,
        user_id: user?.id ?? "",
        layout: body.layout ?? [],
        filters: body.filters ?? {},
        is_shared: false,
        // Provisioned at creation, live once sharing is switched on: clients must never show it.
        share_token: newShareToken(),
        created_at: at,
        updated_at: at,
        default_scope: body.default_scope ?? null,
        sharing: { visibility: "private", permissions: [], members: [] },
        can_edit: true,
        can_manage: true,
      };
      state.data.dashboards.push(dashboard);
      return json(dashboard, 201);
    },
  }),
  defineRoute({
    id: "custom_dashboard_get",
    family: "delegated",
    method: "GET",
    path: "/users/me/custom-dashboards/{dashboard_id}",
    scope: "users:read",
    kind: "read",
    capability: "custom_dashboards",
    summary: "Get one of the delegated user's dashboards",
    params: dashboardParams,
    response: { status: 200, schema: dashboardSchema },
    refusals: { 404: ["custom_dashboard_not_found"] },
    handle: ({ params, user, state }) =>
      json(ownDashboard(state, user?.id ?? "", params.dashboard_id)),
  }),
  defineRoute({
    id: "custom_dashboard_update",
    family: "delegated",
    method: "PATCH",
    path: "/users/me/custom-dashboards/{dashboard_id}",
    scope: "users:write",
    kind: "write",
    capability: "custom_dashboards",
    summary: "Change a dashboard",
    description:
      "Absent fields are left as they are; null clears `description` and `default_scope`. Sharing changes through its own route.",
    params: dashboardParams,
    body: updateBody,
    response: { status: 200, schema: dashboardSchema },
    refusals: { 404: ["custom_dashboard_not_found"] },
    example: () => ({ body: { name: "Comité mensuel (T2)" } }),
    handle({ params, body, user, state, now }) {
      const dashboard = ownDashboard(state, user?.id ?? "", params.dashboard_id);
      Object.assign(dashboard, sentFields(body), { updated_at: new Date(now()).toISOString() });
      return json(dashboard);
    },
  }),
  defineRoute({
    id: "custom_dashboard_delete",
    family: "delegated",
    method: "DELETE",
    path: "/users/me/custom-dashboards/{dashboard_id}",
    scope: "users:write",
    kind: "write",
    capability: "custom_dashboards",
    summary: "Delete a dashboard",
    description: "Its share link stops working with it.",
    params: dashboardParams,
    response: { status: 204 },
    refusals: { 404: ["custom_dashboard_not_found"] },
    handle({ params, user, state }) {
      const dashboard = ownDashboard(state, user?.id ?? "", params.dashboard_id);
      state.data.dashboards.splice(state.data.dashboards.indexOf(dashboard), 1);
      return { status: 204 };
    },
  }),
  defineRoute({
    id: "custom_dashboard_sharing_update",
    family: "delegated",
    method: "PUT",
    path: "/users/me/custom-dashboards/{dashboard_id}/sharing",
    scope: "users:write",
    kind: "write",
    capability: "custom_dashboards",
    summary: "Replace a dashboard's sharing",
    description:
      "`private`, `members` (with `members`: user ids of the entity) or `entity`; `permissions` default to view. Making a dashboard private revokes its share link; sharing it again issues a new one.",
    params: dashboardParams,
    body: sharingBody,
    response: { status: 200, schema: dashboardSchema },
    refusals: { 404: ["custom_dashboard_not_found"] },
    example: () => ({
      body: { visibility: "members", permissions: ["view"], members: [DEMO_USERS.julien] },
    }),
    handle({ params, body, user, state, now }) {
      const dashboard = ownDashboard(state, user?.id ?? "", params.dashboard_id);
      checkSharing(state, dashboard.user_id, body);
      const shared = body.visibility !== "private";
      // Edit implies view; a private dashboard grants nothing.
      const permissions = shared
        ? PERMISSIONS.filter((p) => p === "view" || (body.permissions ?? []).includes(p))
        : [];
      Object.assign(dashboard, {
        is_shared: shared,
        share_token: shared ? (dashboard.share_token ?? newShareToken()) : null,
        sharing: {
          visibility: body.visibility,
          permissions,
          members: [...new Set(body.members ?? [])],
        },
        updated_at: new Date(now()).toISOString(),
      });
      return json(dashboard);
    },
  }),
];
