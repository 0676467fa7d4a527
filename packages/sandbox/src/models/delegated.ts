import { z } from "zod";
import { component, dateTime, jsonObject, uuid } from "./common.js";

export const VIEW_TYPES = ["operations", "deals", "operateurs"] as const;
export type SavedViewType = (typeof VIEW_TYPES)[number];

export const sortKeySchema = z.object({
  sort_by: z.string(),
  sort_order: z.enum(["asc", "desc"]),
});
export type SortKey = z.output<typeof sortKeySchema>;

/** Spec part 2, saved view of the delegated user; the response fields are the sandbox's. */
export const savedViewSchema = component(
  "SavedView",
  z.object({
    id: uuid,
    user_id: z.string(),
    name: z.string(),
    type: z.enum(VIEW_TYPES),
    filters: jsonObject,
    columns: z.array(z.string()),
    sort: z.array(sortKeySchema),
    icon: z.string().nullable(),
    color: z.string().nullable(),
    is_default: z.boolean(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type SavedView = z.output<typeof savedViewSchema>;

/** Spec part 2, custom dashboard of the delegated user (response fields). */
export const dashboardSchema = component(
  "CustomDashboard",
  z.object({
    id: uuid,
    name: z.string(),
    description: z.string().nullable(),
    user_id: z.string(),
    layout: z.array(jsonObject),
    filters: jsonObject,
    is_shared: z.boolean(),
    share_token: z.string().nullable(),
    created_at: dateTime,
    updated_at: dateTime,
    default_scope: jsonObject.nullable(),
    sharing: jsonObject.nullable(),
    can_edit: z.boolean(),
    can_manage: z.boolean(),
  }),
);
export type Dashboard = z.output<typeof dashboardSchema>;

/** Where the application opens, for the delegated user (preferences; the sandbox's choice). */
export const LANDING_PAGES = ["portfolio", "operations", "deals", "alerts", "calendar"] as const;

/** The delegated user's display preferences (GET /users/me/preferences). */
export const preferencesSchema = component(
  "UserPreferences",
  z.object({
    default_landing: z.enum(LANDING_PAGES),
    number_format: z.enum(["fr", "en"]),
    density: z.enum(["comfortable", "compact"]),
  }),
);

/** How the delegated user is told about alerts (GET /users/me/alert-preferences). */
export const alertPreferencesSchema = component(
  "UserAlertPreferences",
  z.object({
    email_digest: z.enum(["none", "daily", "weekly"]),
    critical_push: z.boolean(),
    /** Operations whose alerts the user does not want to hear about. */
    muted_operation_ids: z.array(uuid),
  }),
);
