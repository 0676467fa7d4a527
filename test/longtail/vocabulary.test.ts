import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { folded } from "../../src/fold.js";
import { OperationIndex } from "../../src/longtail/search.js";
import { stem, words } from "../../src/longtail/text.js";
import {
  PORTFOLIO_WORDS,
  REQUEST_WORDS,
  SYNONYMS,
  sayings,
  termsOf,
} from "../../src/toolkit/vocabulary.js";
import { searchableOperations } from "../helpers/contract-operations.js";
import { connectInMemory } from "../helpers/mcp.js";

/**
 * The portfolio's French and English vocabulary (src/toolkit/vocabulary.ts), one file that both
 * search_portfolio (the data's words) and find_api_operations (the contract's words) read.
 */
describe("the portfolio's vocabulary", () => {
  it.each([
    ["rapport trimestriel Les Rives", "reporting trimestriel les rives"],
    ["quarterly report", "trimestriel reporting"],
    ["repayment schedule", "echeancier"],
    ["tableau d'amortissement", "echeancier"],
    ["comptes annuels 2025", "comptes annuels 2025"],
    ["valuation report", "rapport d'expertise"],
    ["articles of association", "statuts"],
  ])("asks %s also as the data says it (%s)", (query, expected) => {
    const asked = sayings(query);
    expect(asked[0]).toBe(query);
    expect(asked.length).toBeLessThanOrEqual(4);
    expect(asked.map((a) => folded(a))).toContain(folded(expected));
  });

  it("leaves a query without portfolio words alone", () => {
    expect(sayings("Terrasses Saint-Exupéry")).toEqual(["Terrasses Saint-Exupéry"]);
  });

  it("keeps each term in one group only", () => {
    const terms = SYNONYMS.flat().map(folded);
    expect(terms.filter((t, i) => terms.indexOf(t) !== i)).toEqual([]);
  });

  it("says a group's word once in the file: no request entry repeats it", () => {
    const grouped = new Set(PORTFOLIO_WORDS.flatMap(termsOf).map((t) => words(t).join(" ")));
    const repeated = REQUEST_WORDS.flatMap(termsOf)
      .map((t) => words(t).join(" "))
      .filter((t) => grouped.has(t));
    expect(repeated).toEqual([]);
  });

  it("widens every word of a group to the group's contract words in find_api_operations", () => {
    const index = new OperationIndex(searchableOperations());
    const unwired: string[] = [];
    for (const entry of PORTFOLIO_WORDS) {
      const contract = words(entry[0]).join(" ");
      for (const term of termsOf(entry)) {
        if (words(term).join(" ") === contract) continue; // the contract's own words, as typed
        const [concept] = index.explain(term, "documents_list");
        const widened = concept?.[0].split("→")[1] ?? "";
        // The stems of the contract's words ("repayment schedule" as "repayment+schedul").
        if (widened === "" || widened.split("+").length < new Set(words(entry[0]).map(stem)).size)
          unwired.push(`${term} → ${widened || "nothing"}`);
      }
    }
    expect(unwired).toEqual([]);
  });
});

describe("find_api_operations speaks it", () => {
  let sandbox: Sandbox;
  let session: Awaited<ReturnType<typeof connectInMemory>>;
  beforeAll(async () => {
    sandbox = await startSandbox({ rateLimit: false });
    session = await connectInMemory(sandbox, { contract: true });
  });
  afterAll(async () => {
    await session.close();
    await sandbox.close();
  });
  const found = async (query: string) => {
    const reply = (await session.client.callTool({
      name: "find_api_operations",
      arguments: { query, kind: "read" },
    })) as any;
    return reply.structuredContent.operations.map((op: { id: string }) => op.id) as string[];
  };

  it.each([
    // Kinds of documents, in either language: a document read, not an operation or a setting.
    ["la grille de prix des Allées Voltaire", "documents_list"],
    ["the sales grid of Les Allées Voltaire", "operation_documents_list"],
    ["the articles of association of the SPV", "documents_list"],
    ["le dernier rapport trimestriel de l'opération", "operation_documents_list"],
    ["la mise en demeure envoyée à l'opérateur", "documents_list"],
    ["the credit memo for the refinancing", "documents_list"],
    // The schedule, and who borrows.
    ["le tableau d'amortissement de l'opération", "repayment_schedule_get"],
    ["la liste des emprunteurs", "operators_list"],
  ])("%s → %s among the first three", async (query, expected) => {
    expect((await found(query)).slice(0, 3)).toContain(expected);
  });
});
