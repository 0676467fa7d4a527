import { z } from "zod";
import { component, date, dateTime, jsonObject, uuid } from "./common.js";

export const OPERATOR_TYPES = [
  "promoteur",
  "marchand_de_biens",
  "asset_manager",
  "fonciere",
  "entrepreneur_general",
] as const;
export type OperatorType = (typeof OPERATOR_TYPES)[number];

/** Spec part 2, Operator. */
export const operatorSchema = component(
  "Operator",
  z.object({
    id: uuid,
    data: jsonObject,
    source_extraction: z.boolean(),
    litiges_en_cours: z.boolean(),
    created_at: dateTime,
    updated_at: dateTime,
    name: z.string().nullable(),
    siren: z.string().nullable(),
    type: z.enum(OPERATOR_TYPES).nullable(),
    litiges_detail: z.string().nullable(),
    responsable_interne: z.string().nullable(),
    reputation_gouvernance_score: z.number().nullable(),
    reputation_gouvernance_label: z.string().nullable(),
    forme_societe_mere: z.string().nullable(),
    siren_mere: z.string().nullable(),
    /** The operator's id in the source system that synchronises it, if any (not a UUID). */
    external_id: z.string().nullable(),
  }),
);
export type Operator = z.output<typeof operatorSchema>;

export const RISK_CATEGORIES = [
  "financier",
  "juridique",
  "reputation",
  "conformite",
  "sanctions",
  "execution",
] as const;
export const RISK_LEVELS = ["faible", "modere", "eleve", "critique"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];
export const RISK_STATUSES = ["identifie", "en_traitement", "maitrise", "clos"] as const;
export type RiskStatus = (typeof RISK_STATUSES)[number];

/** A third-party risk on an operator (fields not shown by the spec: the sandbox's, see README). */
export const thirdPartyRiskSchema = component(
  "ThirdPartyRisk",
  z.object({
    id: uuid,
    operateur_id: uuid,
    category: z.enum(RISK_CATEGORIES),
    level: z.enum(RISK_LEVELS),
    status: z.enum(RISK_STATUSES),
    title: z.string(),
    description: z.string().nullable(),
    /** The measures taken or planned; required before the risk can be declared under control. */
    mitigation: z.string().nullable(),
    /** Who follows the risk (a user id or a name). */
    owner: z.string().nullable(),
    review_date: date.nullable(),
    identified_at: date,
    closed_at: dateTime.nullable(),
    created_by: z.string(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type ThirdPartyRisk = z.output<typeof thirdPartyRiskSchema>;
