import { describe, expect, it } from "vitest";
import { folded } from "../../src/fold.js";
import { SYNONYMS, sayings } from "../../src/toolkit/vocabulary.js";

/** The portfolio's French and English vocabulary (src/toolkit/vocabulary.ts), one file. */
describe("the portfolio's vocabulary", () => {
  it.each([
    ["rapport trimestriel Les Rives", "reporting trimestriel les rives"],
    ["quarterly report", "trimestriel reporting"],
    ["repayment schedule", "echeancier"],
    ["comptes annuels 2025", "comptes annuels 2025"],
    ["valuation report", "rapport d'expertise"],
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
});
