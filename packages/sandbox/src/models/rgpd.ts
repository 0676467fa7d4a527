import { z } from "zod";
import { component, date, dateTime, jsonObject, uuid } from "./common.js";

/**
 * Personal-data processing for the delegated user (spec part 5: rgpd_export, rgpd_inventory,
 * rgpd_erasure). The spec shows the routes' capabilities only; the shapes are the sandbox's.
 */

export const RGPD_EXPORT_STATUSES = ["pending", "ready", "expired"] as const;
export type RgpdExportStatus = (typeof RGPD_EXPORT_STATUSES)[number];

/** An export job: prepared in the background, then downloadable for a while. */
export const rgpdExportSchema = component(
  "RgpdExport",
  z.object({
    id: uuid,
    user_id: z.string(),
    status: z.enum(RGPD_EXPORT_STATUSES),
    format: z.literal("json"),
    requested_at: dateTime,
    /** When the export is (or will be) ready. */
    ready_at: dateTime,
    /** When a ready export stops being served. */
    expires_at: dateTime,
    size_bytes: z.int().min(0).nullable(),
    /** The user's personal data, while the export is ready; null before and after. */
    data: jsonObject.nullable(),
  }),
);
export type RgpdExport = z.output<typeof rgpdExportSchema>;

export const LEGAL_BASES = ["contract", "legitimate_interest", "legal_obligation"] as const;

export const rgpdCategorySchema = z.object({
  category: z.string(),
  description: z.string(),
  records: z.int().min(0),
  legal_basis: z.enum(LEGAL_BASES),
  retention: z.string(),
  /** What an erasure does to the category: deleted, or kept with the person's name removed. */
  on_erasure: z.enum(["deleted", "pseudonymised"]),
});
export type RgpdCategory = z.output<typeof rgpdCategorySchema>;

export const RGPD_ERASURE_STATUSES = ["scheduled", "completed"] as const;

/** An erasure request: recorded at once, carried out on `effective_on`, never withdrawn. */
export const rgpdErasureSchema = component(
  "RgpdErasureRequest",
  z.object({
    id: uuid,
    user_id: z.string(),
    status: z.enum(RGPD_ERASURE_STATUSES),
    reason: z.string().nullable(),
    requested_at: dateTime,
    requested_by: z.string(),
    effective_on: date,
    completed_at: dateTime.nullable(),
    deleted: z.array(z.string()),
    pseudonymised: z.array(z.string()),
  }),
);
export type RgpdErasure = z.output<typeof rgpdErasureSchema>;

export const rgpdInventorySchema = component(
  "RgpdInventory",
  z.object({
    user_id: z.string(),
    generated_at: dateTime,
    categories: z.array(rgpdCategorySchema),
    erasure: rgpdErasureSchema.nullable(),
  }),
);
