import { z } from "zod";
import { delegatedUser } from "../delegation.js";
import type { JsonObject } from "../models/common.js";
import { alertPreferencesSchema, preferencesSchema } from "../models/delegated.js";
import { profileOf, profileSchema } from "../models/users.js";
import { invalid } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import { uuid } from "../validation.js";
import { dashboardRoutes } from "./dashboards.js";
import { sentFields } from "./patch.js";
import { rgpdRoutes } from "./rgpd.js";
import { savedViewRoutes } from "./saved-views.js";
import { applyPersonChanges, personFields } from "./users.js";

/** The delegated user's own routes (spec part 5): every one acts for the user in `ctx.user`. */

const meBody = z.strictObject({
  first_name: personFields.first_name.optional(),
  last_name: personFields.last_name.optional(),
  job_title: personFields.job_title.optional(),
  locale: personFields.locale.optional(),
  timezone: personFields.timezone.optional(),
});

const preferencesBody = preferencesSchema.partial().strict();
const alertPreferencesBody = z.strictObject({
  email_digest: alertPreferencesSchema.shape.email_digest.optional(),
  critical_push: z.boolean().optional(),
  muted_operation_ids: z.array(uuid).max(200).optional(),
});

/** Changes a set of preferences: absent fields stay, the rest is checked by its model. */
function changePreferences<S extends z.ZodType<JsonObject>>(
  schema: S,
  current: JsonObject,
  changes: object,
): z.output<S> {
  return schema.parse({ ...schema.parse(current), ...sentFields(changes) });
}

export const meRoutes = [
  defineRoute({
    id: "me_get",
    family: "delegated",
    method: "GET",
    path: "/users/me",
    scope: "users:read",
    kind: "read",
    capability: "user_self_service",
    summary: "Get the delegated user's profile",
    response: { status: 200, schema: profileSchema },
    handle: ({ user, state }) => json(profileOf(delegatedUser(user), state.data.entity.id)),
  }),
  defineRoute({
    id: "me_update",
    family: "delegated",
    method: "PATCH",
    path: "/users/me",
    scope: "users:write",
    kind: "write",
    capability: "user_self_service",
    summary: "Change the delegated user's profile",
    description:
      "Name, job title, locale and time zone; absent fields are left as they are. The address, the status and the read-only flag belong to the entity's administration.",
    body: meBody,
    response: { status: 200, schema: profileSchema },
    example: () => ({ body: { job_title: "Directrice des investissements et du financement" } }),
    handle({ body, user, state, now }) {
      const me = delegatedUser(user);
      applyPersonChanges(me, body, new Date(now()).toISOString());
      return json(profileOf(me, state.data.entity.id));
    },
  }),
  defineRoute({
    id: "me_preferences_get",
    family: "delegated",
    method: "GET",
    path: "/users/me/preferences",
    scope: "users:read",
    kind: "read",
    capability: "user_self_service",
    summary: "Get the delegated user's display preferences",
    response: { status: 200, schema: preferencesSchema },
    handle: ({ user }) => json(preferencesSchema.parse(delegatedUser(user).preferences)),
  }),
  defineRoute({
    id: "me_preferences_update",
    family: "delegated",
    method: "PATCH",
    path: "/users/me/preferences",
    scope: "users:write",
    kind: "write",
    capability: "user_self_service",
    summary: "Change the delegated user's display preferences",
    description: "Absent fields are left as they are.",
    body: preferencesBody,
    response: { status: 200, schema: preferencesSchema },
    example: () => ({ body: { density: "compact" } }),
    handle({ body, user, now }) {
      const me = delegatedUser(user);
      me.preferences = changePreferences(preferencesSchema, me.preferences, body);
      me.updated_at = new Date(now()).toISOString();
      return json(me.preferences);
    },
  }),
  defineRoute({
    id: "me_alert_preferences_get",
    family: "delegated",
    method: "GET",
    path: "/users/me/alert-preferences",
    scope: "users:read",
    kind: "read",
    capability: "user_self_service",
    summary: "Get the delegated user's alert preferences",
    response: { status: 200, schema: alertPreferencesSchema },
    handle: ({ user }) => json(alertPreferencesSchema.parse(delegatedUser(user).alert_preferences)),
  }),
  defineRoute({
    id: "me_alert_preferences_update",
    family: "delegated",
    method: "PATCH",
    path: "/users/me/alert-preferences",
    scope: "users:write",
    kind: "write",
    capability: "user_self_service",
    summary: "Change the delegated user's alert preferences",
    description:
      "Absent fields are left as they are; `muted_operation_ids` replaces the list and names operations of the entity.",
    body: alertPreferencesBody,
    response: { status: 200, schema: alertPreferencesSchema },
    refusals: { 422: ["reference_not_found"] },
    example: () => ({ body: { email_digest: "weekly", critical_push: true } }),
    handle({ body, user, state, now }) {
      const me = delegatedUser(user);
      const muted = body.muted_operation_ids?.map((id) => id.toLowerCase());
      const unknown = (muted ?? []).flatMap((id, i) =>
        state.data.operations.some((o) => o.id === id) ? [] : [i],
      );
      if (unknown.length > 0) {
        throw invalid(
          unknown.map((i) => ({
            field: `muted_operation_ids[${i}]`,
            rule: "existing record",
            message: "names no operation of this entity",
          })),
          "reference_not_found",
        );
      }
      me.alert_preferences = changePreferences(alertPreferencesSchema, me.alert_preferences, {
        ...body,
        ...(muted ? { muted_operation_ids: [...new Set(muted)] } : {}),
      });
      me.updated_at = new Date(now()).toISOString();
      return json(me.alert_preferences);
    },
  }),
  ...savedViewRoutes,
  ...dashboardRoutes,
  ...rgpdRoutes,
];
