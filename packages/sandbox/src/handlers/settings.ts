import { z } from "zod";
import type { SettingsData } from "../data/settings.js";
import { serviceAccount } from "../keys.js";
import {
  brandingSettingsFields,
  brandingSettingsSchema,
  businessSettingsFields,
  businessSettingsSchema,
  reportingSettingsFields,
  reportingSettingsSchema,
} from "../models/settings.js";
import { defineRoute, json, type RouteDef } from "../routing.js";
import { sentFields } from "./patch.js";

type Part = keyof SettingsData["settings"];

/**
 * One part of the entity's settings: a read, and a partial update (spec part 2: absent fields
 * are left as they are, null clears a nullable one, null elsewhere is refused).
 */
function settingsPart(
  part: Part,
  what: string,
  fields: z.ZodRawShape,
  schema: z.ZodType,
  example: Record<string, unknown>,
): RouteDef[] {
  return [
    defineRoute({
      id: `settings_${part}_get`,
      family: "settings",
      method: "GET",
      path: `/settings/${part}`,
      scope: "settings:read",
      kind: "read",
      summary: `Get the entity's ${what} settings`,
      response: { status: 200, schema },
      handle: ({ state }) => json(state.data.settings[part]),
    }),
    defineRoute({
      id: `settings_${part}_update`,
      family: "settings",
      method: "PATCH",
      path: `/settings/${part}`,
      scope: "settings:write",
      kind: "write",
      summary: `Change the entity's ${what} settings`,
      description:
        "Absent fields are left as they are; null clears a nullable field. Lists are replaced whole.",
      body: z.strictObject(fields).partial(),
      response: { status: 200, schema },
      example: () => ({ body: example }),
      handle({ body, state, key, now }) {
        const settings = state.data.settings[part];
        Object.assign(settings, sentFields(body), {
          updated_at: new Date(now()).toISOString(),
          updated_by: serviceAccount(key),
        });
        return json(settings);
      },
    }),
  ];
}

export const settingsRoutes = [
  ...settingsPart("business", "business", businessSettingsFields, businessSettingsSchema, {
    ltv_covenant_max_pct: "60.00",
  }),
  ...settingsPart("reporting", "reporting", reportingSettingsFields, reportingSettingsSchema, {
    reminder_days_before: 15,
  }),
  ...settingsPart("branding", "branding", brandingSettingsFields, brandingSettingsSchema, {
    secondary_color: null,
  }),
];
