import { z } from "zod";
import { component, dateTime, decimal, uuid } from "./common.js";

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
    status: z.enum(["investing", "harvesting", "closed"]),
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
    status: z.enum(["active", "in_liquidation"]),
    external_id: z.string(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type Spv = z.output<typeof spvSchema>;
