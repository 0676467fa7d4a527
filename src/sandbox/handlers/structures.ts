import { z } from "zod";
import { defineRoute, json } from "../routing.js";
import { nameFilter, sameName } from "./pagination.js";

export const structureRoutes = [
  defineRoute({
    id: "spvs_list",
    method: "GET",
    path: "/spvs",
    scope: "spvs:read",
    kind: "read",
    query: z.strictObject({ name: nameFilter.optional() }),
    handle({ query, state }) {
      const spvs = state.data.spvs
        .filter((s) => query.name === undefined || sameName(s.name, query.name))
        .sort((a, b) => a.name.localeCompare(b.name, "fr"));
      return json({ items: spvs, total: spvs.length });
    },
  }),
];
