import { z } from "zod";
import { component, pageOf } from "../models/common.js";
import { DEAL_STATUSES, dealSchema } from "../models/deals.js";
import { notFound } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import { uuid } from "../validation.js";
import { page, pageQuery } from "./pagination.js";

export const dealRoutes = [
  defineRoute({
    id: "deals_list",
    family: "deals",
    method: "GET",
    path: "/deals",
    scope: "deals:read",
    kind: "read",
    summary: "List deals of the pipeline",
    response: { status: 200, schema: component("DealList", pageOf(dealSchema)) },
    query: z.strictObject({ status: z.enum(DEAL_STATUSES).optional(), ...pageQuery(200, 50) }),
    handle({ query, state }) {
      const deals = state.data.deals
        .filter((d) => query.status === undefined || d.status === query.status)
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
      return json(page(deals, query));
    },
  }),
  defineRoute({
    id: "deal_get",
    family: "deals",
    method: "GET",
    path: "/deals/{deal_id}",
    scope: "deals:read",
    kind: "read",
    summary: "Get a deal",
    response: { status: 200, schema: dealSchema },
    refusals: { 404: ["deal_not_found"] },
    params: z.strictObject({ deal_id: uuid }),
    handle({ params, state }) {
      const deal = state.data.deals.find((d) => d.id === params.deal_id.toLowerCase());
      if (!deal) throw notFound("deal", params.deal_id, "deal_not_found");
      return json(deal);
    },
  }),
];
