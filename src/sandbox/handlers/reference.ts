import { z } from "zod";
import { Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";

export const referenceRoutes = [
  defineRoute({
    id: "taxonomies_get",
    method: "GET",
    path: "/taxonomies",
    scope: "taxonomies:read",
    kind: "read",
    handle: ({ state }) => json({ dimensions: state.data.taxonomies }),
  }),
  defineRoute({
    id: "field_definitions_list",
    method: "GET",
    path: "/field-definitions",
    scope: "taxonomies:read",
    kind: "read",
    handle: ({ state }) =>
      json({ items: state.data.fieldDefinitions, total: state.data.fieldDefinitions.length }),
  }),
  defineRoute({
    id: "field_definition_get",
    method: "GET",
    path: "/field-definitions/by-key/{field_key}",
    scope: "taxonomies:read",
    kind: "read",
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
