import { z } from "zod";
import { component, pageOf } from "../models/common.js";
import { fieldDefinitionSchema, taxonomyDimensionSchema } from "../models/taxonomies.js";
import { Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";

export const referenceRoutes = [
  defineRoute({
    id: "taxonomies_get",
    family: "taxonomies",
    method: "GET",
    path: "/taxonomies",
    scope: "taxonomies:read",
    kind: "read",
    summary: "List the entity's taxonomies",
    response: {
      status: 200,
      schema: component("Taxonomies", z.object({ dimensions: z.array(taxonomyDimensionSchema) })),
    },
    handle: ({ state }) => json({ dimensions: state.data.taxonomies }),
  }),
  defineRoute({
    id: "taxonomy_get",
    family: "taxonomies",
    method: "GET",
    path: "/taxonomies/{dimension}",
    scope: "taxonomies:read",
    kind: "read",
    summary: "Get one taxonomy dimension and its codes",
    response: { status: 200, schema: taxonomyDimensionSchema },
    refusals: { 404: ["taxonomy_not_found"] },
    params: z.strictObject({
      dimension: z
        .string()
        .regex(
          /^[a-z][a-z0-9_]{0,63}$/,
          "must be a dimension name: lowercase letters, digits and _",
        ),
    }),
    handle({ params, state }) {
      const dimension = state.data.taxonomies.find((d) => d.dimension === params.dimension);
      if (!dimension) {
        const names = state.data.taxonomies.map((d) => d.dimension).join(", ");
        throw new Problem(
          404,
          `No taxonomy dimension ${params.dimension}; the entity has ${names}.`,
          {
            reasonCode: "taxonomy_not_found",
          },
        );
      }
      return json(dimension);
    },
  }),
  defineRoute({
    id: "field_definitions_list",
    family: "taxonomies",
    method: "GET",
    path: "/field-definitions",
    scope: "taxonomies:read",
    kind: "read",
    summary: "List business field definitions",
    response: {
      status: 200,
      schema: component("FieldDefinitionList", pageOf(fieldDefinitionSchema)),
    },
    handle: ({ state }) =>
      json({ items: state.data.fieldDefinitions, total: state.data.fieldDefinitions.length }),
  }),
  defineRoute({
    id: "field_definition_get",
    family: "taxonomies",
    method: "GET",
    path: "/field-definitions/by-key/{field_key}",
    scope: "taxonomies:read",
    kind: "read",
    summary: "Get a business field definition by key",
    response: { status: 200, schema: fieldDefinitionSchema },
    refusals: { 404: ["field_definition_not_found"] },
    params: z.strictObject({
      field_key: z
        .string()
        .regex(/^[a-z][a-z0-9_]{0,63}$/, "must be a field key: lowercase letters, digits and _"),
    }),
    handle({ params, state }) {
      const definition = state.data.fieldDefinitions.find((d) => d.key === params.field_key);
      if (!definition) {
        throw new Problem(404, `No field definition with key ${params.field_key}.`, {
          reasonCode: "field_definition_not_found",
        });
      }
      return json(definition);
    },
  }),
];
