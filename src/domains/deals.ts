import { CATALOGUE } from "../api/catalogue.js";
import { matchCodes, matchNamed } from "../api/directory.js";
import { DEAL_STATUSES } from "../api/schemas.js";
import type { Domain } from "../toolkit/definitions.js";
import { dealRows } from "../toolkit/present.js";
import { detailTool, listTool } from "../toolkit/read-tools.js";

const q = CATALOGUE;

/** The pre-closing pipeline. */
export const deals: Domain = {
  tools: [
    listTool({
      name: "list_deals",
      title: "List deals",
      description: "Pre-closing pipeline deals, compact, filtered by status. Paged.",
      family: "deals",
      operation: "deals_list",
      item: dealRows.item,
      present: dealRows.present,
      query: q.deals_list.query.shape,
      pageable: true,
      narrowHint: "filter by status",
    }),
    detailTool({
      name: "get_deal",
      title: "Get a deal",
      description: "One pipeline deal in full.",
      family: "deals",
      operation: "deal_get",
      input: q.deal_get.params,
    }),
  ],
  resources: [
    {
      name: "deals",
      title: "Deals",
      description: "Pipeline deals, compact; filter by status.",
      family: "deals",
      uri: "portfolio://deals{?status,limit,offset}",
      tool: "list_deals",
      mimeType: "application/json",
      complete: { status: async (_d, typed) => matchCodes([...DEAL_STATUSES], typed) },
    },
    {
      name: "deal",
      title: "Deal",
      description: "One pipeline deal in full.",
      family: "deals",
      uri: "portfolio://deals/{deal_id}",
      tool: "get_deal",
      mimeType: "application/json",
      complete: { deal_id: async (d, typed) => matchNamed(await d.deals(), typed) },
    },
  ],
};
