import { z } from "zod";
import { component, pageOf } from "../models/common.js";
import { operatorSchema } from "../models/operators.js";
import { invalid, notFound } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import { uuid } from "../validation.js";
import { nameFilter, page, pageQuery, sameName } from "./pagination.js";

export const operatorRoutes = [
  defineRoute({
    id: "operators_list",
    family: "operators",
    method: "GET",
    path: "/operateurs",
    scope: "operateurs:read",
    kind: "read",
    summary: "List operators",
    description: "`name` (exact) and `search` (partial, or a SIREN prefix) are mutually exclusive.",
    response: { status: 200, schema: component("OperatorList", pageOf(operatorSchema)) },
    query: z.strictObject({
      name: nameFilter.optional(),
      search: z.string().min(1).max(255).optional(),
      ...pageQuery(200, 50),
    }),
    handle({ query, state }) {
      if (query.name !== undefined && query.search !== undefined) {
        throw invalid([
          {
            field: "search",
            rule: "exclusive with name",
            message: "name and search are mutually exclusive; send one",
          },
        ]);
      }
      const needle = query.search?.trim().toLowerCase();
      const operators = state.data.operators
        .filter(
          (o) =>
            (query.name === undefined || sameName(o.name, query.name)) &&
            (needle === undefined ||
              (o.name ?? "").toLowerCase().includes(needle) ||
              (o.siren ?? "").startsWith(needle)),
        )
        .sort((a, b) => (a.name ?? "").localeCompare(b.name ?? "", "fr"));
      return json(page(operators, query));
    },
  }),
  defineRoute({
    id: "operator_get",
    family: "operators",
    method: "GET",
    path: "/operateurs/{operateur_id}",
    scope: "operateurs:read",
    kind: "read",
    summary: "Get an operator",
    response: { status: 200, schema: operatorSchema },
    refusals: { 404: ["operateur_not_found"] },
    params: z.strictObject({ operateur_id: uuid }),
    handle({ params, state }) {
      const operator = state.data.operators.find((o) => o.id === params.operateur_id.toLowerCase());
      if (!operator) throw notFound("operator", params.operateur_id, "operateur_not_found");
      return json(operator);
    },
  }),
];
