import { z } from "zod";
import { component, date, dateTime, decimal, uuid } from "./common.js";

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

/** GET /context: who the bearer speaks for (spec part 1: the token keeps the entity's context). */
export const integrationContextSchema = component(
  "IntegrationContext",
  z.object({
    entity: z.object({ id: uuid, name: z.string(), currency: z.literal("EUR") }),
    environment: z.string(),
    api_version: z.literal("v1"),
    key: z.object({
      key_id: z.string(),
      label: z.string(),
      scopes: z.array(z.string()),
      /** The route allowlist; null when every route of the key's scopes is allowed. */
      routes: z.array(z.string()).nullable(),
      capabilities: z.array(z.string()),
      /** The users the key may act for on /users/me* (spec part 5). */
      delegated_user_ids: z.array(z.string()),
    }),
    server_time: dateTime,
    /** The sandbox's business date: what "today" means for due dates. */
    business_date: date,
    time_zone: z.string(),
  }),
);

export const CONTROL_STATUSES = ["conforme", "a_surveiller", "non_conforme"] as const;

const countBy = <K extends readonly [string, ...string[]]>(keys: K) =>
  z.object(Object.fromEntries(keys.map((k) => [k, z.int().min(0)])) as Record<K[number], z.ZodInt>);

/**
 * GET /rcci/summary: the compliance and internal-control officer's (RCCI) view of the entity,
 * computed from live data (fields not shown by the spec: the sandbox's, see README).
 */
export const rcciSummarySchema = component(
  "RcciSummary",
  z.object({
    entity: z.object({ id: uuid, name: z.string() }),
    as_of: dateTime,
    /** One line per control, worst first. */
    controls: z.array(
      z.object({
        code: z.string(),
        label: z.string(),
        status: z.enum(CONTROL_STATUSES),
        /** How many records the control flags. */
        findings: z.int().min(0),
        detail: z.string(),
      }),
    ),
    operations: z.object({
      live: z.int().min(0),
      by_internal_status: z.array(
        z.object({ statut_interne: z.string(), count: z.int().min(0), encours: decimal }),
      ),
      /** Live operations in alert or pre-litigation, largest outstanding first (at most 10). */
      watchlist: z.array(
        z.object({
          operation_id: uuid,
          name: z.string(),
          statut_interne: z.string(),
          encours: decimal,
        }),
      ),
    }),
    alerts: z.object({
      /** Not yet resolved nor dismissed as false positives. */
      unclosed: z.int().min(0),
      by_severity: countBy(["critical", "warning", "info"] as const),
    }),
    operators: z.object({
      total: z.int().min(0),
      litigation: z.int().min(0),
      siren_invalid: z.int().min(0),
      reputation_to_watch: z.int().min(0),
    }),
    third_party_risks: z.object({
      open: z.int().min(0),
      by_level: countBy(["faible", "modere", "eleve", "critique"] as const),
    }),
  }),
);
export type RcciSummary = z.output<typeof rcciSummarySchema>;
