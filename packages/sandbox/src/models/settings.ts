import { z } from "zod";
import { checkSiren } from "../siren.js";
import { component, DECIMAL_PATTERN, dateTime } from "./common.js";
import { LOCALES } from "./users.js";

/**
 * The entity's settings (spec part 1: business, reporting and branding settings). The spec
 * shows no field: these are the sandbox's (README). Each model lists its fields once, with the
 * rules an update must follow; the stored record adds who changed it last, and when.
 */

const SIREN_PATTERN = /^\d{9}$/;
const AMF_PATTERN = /^GP-\d{8}$/;
const COLOR_PATTERN = /^#[0-9A-Fa-f]{6}$/;

/** A percentage as a decimal string, 0 to 100. */
const percentage = z
  .string()
  .regex(DECIMAL_PATTERN, "must be a decimal number as a string")
  .refine((v) => Number(v) >= 0 && Number(v) <= 100, "must be between 0 and 100");

const audit = { updated_at: dateTime, updated_by: z.string() };

export const businessSettingsFields = {
  legal_name: z.string().trim().min(1).max(200),
  siren: z
    .string()
    .regex(SIREN_PATTERN, "must be 9 digits")
    .refine((v) => checkSiren(v).checksum_valid, "the check digit does not match (Luhn)")
    .nullable(),
  amf_approval_number: z.string().regex(AMF_PATTERN, "must look like GP-12345678").nullable(),
  registered_address: z.string().trim().min(1).max(500).nullable(),
  base_currency: z.enum(["EUR"]),
  fiscal_year_start_month: z.int().min(1).max(12),
  default_locale: z.enum(LOCALES),
  /** The LTV covenant alerts are measured against, in percent. */
  ltv_covenant_max_pct: percentage,
  /** The debt-service coverage below which an alert is raised. */
  dscr_floor: z
    .string()
    .regex(DECIMAL_PATTERN, "must be a decimal number as a string")
    .refine((v) => Number(v) > 0 && Number(v) <= 10, "must be above 0 and at most 10"),
  /** The largest share of commitments one operator may carry, in percent. */
  operator_concentration_max_pct: percentage,
};

export const businessSettingsSchema = component(
  "BusinessSettings",
  z.object({ ...businessSettingsFields, ...audit }),
);
export type BusinessSettings = z.output<typeof businessSettingsSchema>;

export const reportingSettingsFields = {
  frequency: z.enum(["monthly", "quarterly", "semiannual", "annual"]),
  /** Days after a period's end by which operators owe their reporting. */
  deadline_days: z.int().min(1).max(180),
  /** Days before the deadline the reminder goes out; 0 for none. */
  reminder_days_before: z.int().min(0).max(60),
  recipients: z.array(z.email("must be an email address").max(254)).max(20),
  amounts_unit: z.enum(["units", "thousands", "millions"]),
  include_closed_operations: z.boolean(),
  inrev_export_enabled: z.boolean(),
  signatory: z.string().trim().min(1).max(200).nullable(),
};

export const reportingSettingsSchema = component(
  "ReportingSettings",
  z.object({ ...reportingSettingsFields, ...audit }),
);
export type ReportingSettings = z.output<typeof reportingSettingsSchema>;

export const brandingSettingsFields = {
  display_name: z.string().trim().min(1).max(120),
  primary_color: z.string().regex(COLOR_PATTERN, "must be a colour like #1F3A5F"),
  secondary_color: z.string().regex(COLOR_PATTERN, "must be a colour like #1F3A5F").nullable(),
  logo_url: z
    .url({ protocol: /^https$/, error: "must be an https URL" })
    .max(2000)
    .nullable(),
  report_footer: z.string().max(500).nullable(),
  email_signature: z.string().max(2000).nullable(),
};

export const brandingSettingsSchema = component(
  "BrandingSettings",
  z.object({ ...brandingSettingsFields, ...audit }),
);
export type BrandingSettings = z.output<typeof brandingSettingsSchema>;
