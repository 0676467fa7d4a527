import { z } from "zod";
import { component, dateTime, jsonObject, uuid } from "./common.js";

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
  }),
);
export type Operator = z.output<typeof operatorSchema>;
