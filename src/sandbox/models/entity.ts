import { z } from "zod";
import { component, dateTime, decimal, uuid } from "./common.js";

export const entitySchema = z.object({
  id: uuid,
  name: z.string(),
  environment: z.string(),
  currency: z.literal("EUR"),
});
export type Entity = z.output<typeof entitySchema>;

const amounts = { count: z.int().min(0), montant_engage: decimal, encours: decimal };

/** GET /portfolio: aggregates whose fields the spec does not show (README). */
export const portfolioSummarySchema = component(
  "PortfolioSummary",
  z.object({
    entity: z.object({ id: uuid, name: z.string() }),
    as_of: dateTime,
    currency: z.literal("EUR"),
    totals: z.object({
      operations: z.int().min(0),
      montant_engage: decimal,
      encours: decimal,
      deals: z.int().min(0),
    }),
    by_status: z.array(z.object({ status: z.string().nullable(), ...amounts })),
    by_asset_class: z.array(z.object({ classe_actif: z.string().nullable(), ...amounts })),
    by_spv: z.array(
      z.object({ spv_id: uuid.nullable(), spv_name: z.string().nullable(), ...amounts }),
    ),
    deals_by_status: z.array(
      z.object({ status: z.string().nullable(), count: z.int().min(0), montant_estime: decimal }),
    ),
  }),
);
