import { folded } from "../fold.js";

/**
 * The portfolio's vocabulary in French and English: words a manager uses for the same thing
 * ("rapport trimestriel" for documents titled "Reporting trimestriel"). search_portfolio asks
 * the API for each way of saying the query; find_api_operations widens its words with them.
 * One group per line; the first word is the one the demo data and the API mostly use.
 */
export const SYNONYMS: readonly (readonly string[])[] = [
  ["reporting", "rapport", "report", "compte rendu"],
  ["trimestriel", "quarterly", "trimestre", "quarter"],
  ["annuel", "annual", "yearly"],
  ["échéancier", "repayment schedule", "tableau d'amortissement", "amortization schedule"],
  ["remboursement", "repayment"],
  ["contrat de prêt", "loan agreement", "facility agreement"],
  ["prêt", "loan"],
  ["rapport d'expertise", "valuation report", "expertise"],
  ["comptes annuels", "annual accounts", "financial statements"],
  ["statuts", "articles of association", "bylaws"],
  ["procès-verbal", "minutes"],
  ["assemblée générale", "general meeting", "ag"],
  ["grille de commercialisation", "sales grid", "grille de prix"],
  ["business plan", "plan d'affaires"],
  ["mise en demeure", "formal notice"],
  ["note de crédit", "credit memo", "credit note"],
  ["opérateur", "operator", "promoteur", "developer"],
  ["échéance", "maturity", "deadline"],
];

const GROUPS = SYNONYMS.map((group) => group.map((term) => folded(term)));
const MAX_VARIANTS = 4;

/**
 * The query, then the same query said with the vocabulary's other words (longest terms first,
 * whole words only), at most four in all: "rapport trimestriel Rives" also as "reporting
 * trimestriel Rives".
 */
export function sayings(query: string): string[] {
  const base = folded(query).replace(/\s+/g, " ").trim();
  const variants = new Set<string>([query.trim()]);
  const swaps: Array<[string, string]> = [];
  for (const group of GROUPS)
    for (const term of [...group].sort((a, b) => b.length - a.length))
      if (new RegExp(`(^|[^a-z0-9])${escape(term)}($|[^a-z0-9])`).test(base))
        for (const other of group) if (other !== term) swaps.push([term, other]);
  // All the first words together (the data's own), then one swap at a time.
  let all = base;
  for (const group of GROUPS) {
    const term = [...group]
      .sort((a, b) => b.length - a.length)
      .find((t) => t !== group[0] && includesWord(all, t));
    if (term) all = replaceWord(all, term, group[0]!);
  }
  if (all !== base) variants.add(all);
  for (const [term, other] of swaps) {
    if (variants.size >= MAX_VARIANTS) break;
    variants.add(replaceWord(base, term, other));
  }
  return [...variants].slice(0, MAX_VARIANTS);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const includesWord = (text: string, term: string) =>
  new RegExp(`(^|[^a-z0-9])${escape(term)}($|[^a-z0-9])`).test(text);
const replaceWord = (text: string, term: string, other: string) =>
  text.replace(new RegExp(`(^|[^a-z0-9])${escape(term)}($|[^a-z0-9])`), `$1${other}$2`);
