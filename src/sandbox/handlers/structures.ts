import { z } from "zod";
import { component, pageOf } from "../models/common.js";
import { spvSchema } from "../models/structures.js";
import { defineRoute, json } from "../routing.js";
import { nameFilter, sameName } from "./pagination.js";

export const structureRoutes = [
  defineRoute({
    id: "spvs_list",
    family: "funds",
    method: "GET",
    path: "/spvs",
    scope: "spvs:read",
    kind: "read",
    summary: "List SPVs",
    response: { status: 200, schema: component("SpvList", pageOf(spvSchema)) },
    query: z.strictObject({ name: nameFilter.optional() }),
    handle({ query, state }) {
      const spvs = state.data.spvs
        .filter((s) => query.name === undefined || sameName(s.name, query.name))
        .sort((a, b) => a.name.localeCompare(b.name, "fr"));
      return json({ items: spvs, total: spvs.length });
    },
  }),
];
