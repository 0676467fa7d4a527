import { z } from "zod";
import { component } from "./common.js";

/** Taxonomies and field definitions: shapes not shown by the spec (README). */
export const taxonomyDimensionSchema = component(
  "TaxonomyDimension",
  z.object({
    dimension: z.string(),
    label: z.string(),
    values: z.array(
      z.object({
        code: z.string(),
        label: z.string(),
        order: z.int(),
        is_active_status: z.boolean().optional(),
      }),
    ),
  }),
);
export type TaxonomyDimension = z.output<typeof taxonomyDimensionSchema>;
export type TaxonomyValue = TaxonomyDimension["values"][number];

export const fieldDefinitionSchema = component(
  "FieldDefinition",
  z.object({
    key: z.string(),
    label: z.string(),
    description: z.string(),
    applies_to: z.enum(["operation", "operateur"]),
    type: z.enum(["string", "integer", "decimal", "date", "boolean", "enum"]),
    unit: z.string().nullable(),
    enum_values: z.array(z.string()).nullable(),
    availability: z.enum(["available", "unavailable", "deprecated"]),
  }),
);
export type FieldDefinition = z.output<typeof fieldDefinitionSchema>;
