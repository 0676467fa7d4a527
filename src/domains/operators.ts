import { z } from "zod";
import { CATALOGUE } from "../api/catalogue.js";
import { matchNamed } from "../api/directory.js";
import { type Domain, defineTool } from "../toolkit/definitions.js";
import { operatorRows } from "../toolkit/present.js";
import { detailTool, listTool } from "../toolkit/read-tools.js";
import { CREATES, madeLately } from "../toolkit/write-tools.js";
import { outcomeSchema } from "../writes/outcome.js";

const q = CATALOGUE;

/** Operators (developers, asset managers...) and their SIREN identity. */
export const operators: Domain = {
  tools: [
    listTool({
      name: "find_operators",
      title: "Find operators",
      description:
        "Operators (developers, asset managers...), compact; name (exact) or search (part of a name). Paged.",
      family: "operators",
      operation: "operators_list",
      item: operatorRows.item,
      present: operatorRows.present,
      query: q.operators_list.query.shape,
      pageable: true,
      narrowHint: "use search",
    }),
    detailTool({
      name: "get_operator",
      title: "Get an operator",
      description:
        "One operator in full: identity, SIREN, disputes, governance score, business data.",
      family: "operators",
      operation: "operator_get",
      input: q.operator_get.params,
    }),
    detailTool({
      name: "lookup_siren",
      title: "Look up a SIREN",
      description: "Company data for a SIREN from local data or cache only; never a billable call.",
      family: "operators",
      operation: "siren_get",
      input: q.siren_get.params,
    }),
    detailTool({
      name: "validate_siren",
      title: "Validate a SIREN",
      description: "Checks a SIREN's format and checksum locally, without any provider.",
      family: "operators",
      operation: "siren_validate",
      input: q.siren_validate.params,
    }),
    defineTool({
      kind: "draft",
      name: "resolve_siren",
      title: "Resolve a SIREN (billable)",
      description:
        "Drafts an explicit resolution of a SIREN with the external provider. BILLABLE: each resolution is charged. Try lookup_siren first (free). Nothing is sent until the user confirms.",
      family: "operators",
      annotations: CREATES,
      operations: ["siren_resolve"],
      writes: ["siren_resolve"],
      output: outcomeSchema,
      input: z.strictObject({
        siren: q.siren_resolve.params.shape.siren.refine(
          luhnValid,
          "must pass the SIREN checksum (Luhn)",
        ),
      }),
      async draft(args, ctx) {
        const path = { siren: args.siren };
        // Resolved moments ago: its answer is in the cache, where lookup_siren reads it free.
        const lately = await madeLately(
          ctx,
          { operation: "siren_resolve", path, body: undefined },
          (ago, answered) =>
            answered
              ? `SIREN ${args.siren} was resolved ${ago}; lookup_siren reads that answer from the cache, free. Resolving again is charged again.`
              : `SIREN ${args.siren} was sent for resolution ${ago} and its answer is not known yet; resolving again may be charged twice.`,
        );
        return {
          path,
          body: undefined,
          preview: {
            action: "Resolve a SIREN with the external provider",
            target: `SIREN ${args.siren}`,
            fields: {},
            billable: true,
            ...(lately.length > 0 ? { warnings: lately } : {}),
          },
        };
      },
    }),
  ],
  resources: [
    {
      name: "operators",
      title: "Operators",
      description: "Operators, compact; exact name or partial search.",
      family: "operators",
      uri: "portfolio://operators{?name,search,limit,offset}",
      tool: "find_operators",
      mimeType: "application/json",
    },
    {
      name: "operator",
      title: "Operator",
      description: "One operator in full.",
      family: "operators",
      uri: "portfolio://operators/{operateur_id}",
      tool: "get_operator",
      mimeType: "application/json",
      complete: { operateur_id: async (d, typed) => matchNamed(await d.operators(), typed) },
    },
    {
      name: "siren",
      title: "SIREN record",
      description: "Local or cached company data for a SIREN (never billable).",
      family: "operators",
      uri: "portfolio://siren/{siren}",
      tool: "lookup_siren",
      mimeType: "application/json",
    },
  ],
};

/** The SIREN check digit (Luhn), checked here so that a typo is never billed. */
export function luhnValid(siren: string): boolean {
  let sum = 0;
  for (let i = 0; i < siren.length; i++) {
    let digit = Number(siren[siren.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}
