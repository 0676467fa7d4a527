import { z } from "zod";
import { CATALOGUE } from "../api/catalogue.js";
import { matchCodes } from "../api/directory.js";
import { type Domain, defineTool, READ_ONLY } from "../toolkit/definitions.js";
import { detail } from "../toolkit/present.js";
import { detailTool, fetchDetail } from "../toolkit/read-tools.js";

const q = CATALOGUE;

/** The six taxonomy dimensions (spec part 2). */
const DIMENSIONS = [
  "operation_status",
  "investment_type",
  "operation_type",
  "asset_class",
  "internal_status",
  "operational_status",
] as const;

/** The codes filters take and the definitions of business fields (spec part 2). */
export const reference: Domain = {
  tools: [
    detailTool({
      name: "get_taxonomies",
      title: "Taxonomies",
      description: "Codes of the six taxonomy dimensions. Filters take these codes, never labels.",
      family: "reference",
      operation: "taxonomies_get",
      input: z.strictObject({
        dimension: z.enum(DIMENSIONS).optional().describe("Only this dimension."),
      }),
      toRequest: () => ({}),
      select: (taxonomies, { dimension }) =>
        dimension === undefined || !Array.isArray(taxonomies.dimensions)
          ? taxonomies
          : {
              ...taxonomies,
              dimensions: taxonomies.dimensions.filter(
                (d) => (d as { dimension?: unknown })?.dimension === dimension,
              ),
            },
    }),
    defineTool({
      kind: "run",
      name: "get_field_definitions",
      title: "Field definitions",
      description:
        "Keys, types, units and availability of business fields (operation and operator data). Give field_key for one.",
      family: "reference",
      annotations: READ_ONLY,
      operations: ["field_definitions_list", "field_definition_get"],
      input: z.strictObject({
        field_key: q.field_definition_get.params.shape.field_key.optional(),
      }),
      output: detail,
      run: async ({ field_key }, ctx) => ({
        structured:
          field_key === undefined
            ? await fetchDetail("field_definitions_list", {}, ctx)
            : await fetchDetail("field_definition_get", { path: { field_key } }, ctx),
      }),
    }),
  ],
  resources: [
    {
      name: "taxonomies",
      title: "Taxonomies",
      description: "Codes of the six taxonomy dimensions.",
      family: "reference",
      uri: "portfolio://taxonomies",
      tool: "get_taxonomies",
      mimeType: "application/json",
    },
    {
      name: "field-definitions",
      title: "Field definitions",
      description: "Keys, types, units and availability of business fields.",
      family: "reference",
      uri: "portfolio://field-definitions",
      tool: "get_field_definitions",
      mimeType: "application/json",
    },
    {
      name: "field-definition",
      title: "Field definition",
      description: "One business field's definition.",
      family: "reference",
      uri: "portfolio://field-definitions/{field_key}",
      tool: "get_field_definitions",
      mimeType: "application/json",
      complete: { field_key: async (d, typed) => matchCodes(await d.fieldKeys(), typed) },
    },
  ],
};
