import { z } from "zod";
import { component, dateTime, jsonObject, uuid } from "./common.js";

/**
 * The account lifecycle (spec part 1, users: activation, suspension): invited until someone
 * activates the account, approved, suspended. Only approved users may be acted for (part 5).
 */
export const USER_STATUSES = ["invited", "approved", "suspended"] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** The locales the sandbox's entity offers its users (the sandbox's choice; README). */
export const LOCALES = ["fr-FR", "en-GB", "en-US"] as const;

/** What every view of a user shows. User ids are strings, not UUIDs (spec part 2, conventions). */
const identity = {
  id: z.string(),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  display_name: z.string(),
  job_title: z.string(),
  status: z.enum(USER_STATUSES),
  read_only: z.boolean(),
  locale: z.string(),
  timezone: z.string(),
};

/** The account's administration: who invited it, when it changed state (users routes). */
const lifecycle = {
  invited_at: dateTime,
  invited_by: z.string().nullable(),
  invitation_expires_at: dateTime.nullable(),
  activated_at: dateTime.nullable(),
  suspended_at: dateTime.nullable(),
  suspension_reason: z.string().nullable(),
  password_reset_requested_at: dateTime.nullable(),
  last_login_at: dateTime.nullable(),
  erased_at: dateTime.nullable(),
};

/** An entity user as the sandbox stores it: each route publishes its own projection. */
export const userSchema = z.object({
  ...identity,
  preferences: jsonObject,
  alert_preferences: jsonObject,
  created_at: dateTime,
  updated_at: dateTime,
  ...lifecycle,
});
export type User = z.output<typeof userSchema>;

/** The delegated user's own profile (GET /users/me): the user and its entity. */
export const profileSchema = component(
  "UserProfile",
  z.object({
    ...identity,
    preferences: jsonObject,
    alert_preferences: jsonObject,
    created_at: dateTime,
    updated_at: dateTime,
    entity_id: uuid,
  }),
);

/** A user as the entity's administration sees it (users routes): no personal preferences. */
export const entityUserSchema = component(
  "EntityUser",
  z.object({ ...identity, ...lifecycle, created_at: dateTime, updated_at: dateTime }),
);

/** What an account action sent, and to whom (password reset, invitation). */
export const accountMessageSchema = component(
  "UserAccountMessage",
  z.object({
    user_id: z.string(),
    message: z.enum(["password_reset", "invitation"]),
    sent_to: z.string(),
    sent_at: dateTime,
    expires_at: dateTime,
  }),
);

/** The delegated user's view of itself: the stored record without its administration. */
export const profileOf = (user: User, entityId: string) =>
  profileSchema.parse({ ...user, entity_id: entityId });

/** The administration's view of a user: without the user's personal preferences. */
export const entityUserOf = (user: User) => entityUserSchema.parse(user);
