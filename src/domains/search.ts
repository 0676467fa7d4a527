import { CATALOGUE } from "../api/catalogue.js";
import { fitToBudget, listOutput } from "../toolkit/budget.js";
import { type Domain, defineTool, READ_ONLY } from "../toolkit/definitions.js";
import { listPage } from "../toolkit/listing.js";
import { documentFacts } from "../toolkit/names.js";
import { followUps, renderSteps } from "../toolkit/next-steps.js";
import { searchHits } from "../toolkit/present.js";
import { listOf } from "../toolkit/read-tools.js";
import { sayings } from "../toolkit/vocabulary.js";

const NARROW = "add words to q, filter by types, or lower limit";

/**
 * One search across the portfolio's records and the text of its documents. The API matches
 * the words as written; the query is also asked as the portfolio's vocabulary says it in the
 * other language ("rapport trimestriel" finds "Reporting trimestriel": toolkit/vocabulary.ts),
 * and the hits are merged, best first, each record once. A document found says its date, type
 * and size (from the server's directory of documents, toolkit/names.ts), so that the person can
 * tell this quarter's report from last year's without opening either.
 */
export const search: Domain = {
  tools: [
    defineTool({
      kind: "run",
      name: "search_portfolio",
      title: "Search the portfolio",
      description:
        "Operations, deals, operators, funds, SPVs and documents matching q (French or English) in a name, a code (SIREN, external id) or a document's text; best first. Paged.",
      family: "search",
      annotations: READ_ONLY,
      operations: ["search"],
      input: CATALOGUE.search.query,
      output: listOf(searchHits.item),
      async run(args, ctx) {
        const { q, offset = 0, limit = 20, ...filters } = args;
        const pages = await Promise.all(
          sayings(q).map((saying) =>
            listPage(
              {
                operation: "search",
                query: { ...filters, q: saying, limit: offset + limit },
                present: (raw: unknown) => searchHits.present(raw) as Hit,
                narrowHint: NARROW,
                maxLimit: 50,
              },
              ctx,
            ),
          ),
        );
        type Hit = ReturnType<typeof searchHits.present>;
        const best = new Map<string, Hit>();
        for (const hit of pages.flatMap((p) => p.list.items as Hit[]))
          if ((best.get(hit.id)?.score ?? -1) < (hit.score ?? 0)) best.set(hit.id, hit);
        const merged = [...best.values()].sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
        const documents = merged.some((h) => h.type === "document")
          ? await documentFacts(ctx)
          : null;
        for (const hit of merged) {
          const facts = hit.type === "document" ? documents?.get(hit.id.toLowerCase()) : undefined;
          if (facts) Object.assign(hit, facts);
        }
        const total = pages.length === 1 ? pages[0]!.list.total : merged.length;
        const { list, text } = fitToBudget(
          listOutput(merged.slice(offset, offset + limit), Math.max(total, merged.length), offset),
          NARROW,
        );
        // A document found can be read (downloaded with its text) or acted on: say how, once.
        const next = merged.some((h) => h.type === "document") ? followUps("/documents", ctx) : [];
        return next.length === 0
          ? { structured: list, text }
          : { structured: { ...list, next }, text: `${text}\n${renderSteps(next)}` };
      },
    }),
  ],
};
