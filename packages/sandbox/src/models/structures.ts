import { z } from "zod";
import { component, dateTime, decimal, uuid } from "./common.js";

export const FUND_STATUSES = ["investing", "harvesting", "closed"] as const;
export type FundStatus = (typeof FUND_STATUSES)[number];
export const SPV_STATUSES = ["active", "in_liquidation"] as const;
export type SpvStatus = (typeof SPV_STATUSES)[number];
export const LEGAL_FORMS = ["SCI", "SAS", "SARL", "SA", "SCCV", "SNC"] as const;

/** Funds and SPVs: fields not shown by the spec, the sandbox's choice (README). */
export const fundSchema = component(
  "Fund",
  z.object({
    id: uuid,
    name: z.string(),
    strategy: z.string(),
    vintage_year: z.int(),
    currency: z.literal("EUR"),
    target_size: decimal,
    status: z.enum(FUND_STATUSES),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type Fund = z.output<typeof fundSchema>;

export const spvSchema = component(
  "Spv",
  z.object({
    id: uuid,
    name: z.string(),
    legal_form: z.string(),
    siren: z.string(),
    fond_id: uuid,
    status: z.enum(SPV_STATUSES),
    external_id: z.string(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type Spv = z.output<typeof spvSchema>;

/** An operation attached to an SPV, as the SPV sees it (the sandbox's shape, see README). */
export const spvAttachmentSchema = component(
  "SpvAttachment",
  z.object({
    spv_id: uuid,
    operation_id: uuid,
    operation_name: z.string(),
    operation_status: z.string(),
    relationship_status: z.enum(["attached", "pending_attachment"]),
    relationship_label: z.string(),
    /** The operation's version after the attachment, for its next update (spec part 9). */
    operation_version: z.int().min(1),
  }),
);
export type SpvAttachment = z.output<typeof spvAttachmentSchema>;
