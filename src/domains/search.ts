import { CATALOGUE } from "../api/catalogue.js";
import type { Domain } from "../inventory/types.js";
import { searchHits } from "../toolkit/present.js";
import { listTool } from "../toolkit/read-tools.js";

/** One search across the portfolio's records and the text of its documents. */
export const search: Domain = {
  tools: [
    listTool({
      name: "search_portfolio",
      title: "Search the portfolio",
      description:
        "Operations, deals, operators, funds, SPVs and documents matching q in a name, a code (SIREN, external id, document code) or a document's text; best first, each hit typed. Paged.",
      family: "search",
      operation: "search",
      item: searchHits.item,
      present: searchHits.present,
      query: CATALOGUE.search.query.shape,
      pageable: false,
      narrowHint: "add words to q, filter by types, or lower limit",
    }),
  ],
};
