import { CATALOGUE } from "../api/catalogue.js";
import type { Domain } from "../toolkit/definitions.js";
import { spvRows } from "../toolkit/present.js";
import { listTool } from "../toolkit/read-tools.js";

/** Investment structures: the SPVs that hold the operations. */
export const structures: Domain = {
  tools: [
    listTool({
      name: "list_spvs",
      title: "List SPVs",
      description: "The entity's SPVs (id, name, legal form, fund). Optional exact name filter.",
      family: "structures",
      operation: "spvs_list",
      item: spvRows.item,
      present: spvRows.present,
      query: CATALOGUE.spvs_list.query.shape,
      pageable: false,
      narrowHint: "filter by name",
    }),
  ],
  resources: [
    {
      name: "spvs",
      title: "SPVs",
      description: "The entity's SPVs; exact name filter.",
      family: "structures",
      uri: "portfolio://spvs{?name}",
      tool: "list_spvs",
      mimeType: "application/json",
    },
  ],
};
