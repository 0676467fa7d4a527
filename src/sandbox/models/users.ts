import { z } from "zod";
import { component, dateTime, jsonObject, uuid } from "./common.js";

export const USER_STATUSES = ["approved", "suspended", "pending"] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** An entity user. User ids are strings that need not be UUIDs (spec part 2, conventions). */
export const userSchema = z.object({
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
  preferences: jsonObject,
  alert_preferences: jsonObject,
  created_at: dateTime,
  updated_at: dateTime,
});
export type User = z.output<typeof userSchema>;

/** The delegated user's own profile (GET /users/me): the user and its entity. */
export const profileSchema = component("UserProfile", userSchema.extend({ entity_id: uuid }));
