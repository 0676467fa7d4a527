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
      if (new RegExp(`(^|[^a-z0-9])${asLiteral(term)}($|[^a-z0-9])`).test(base))
        for (const other of group) if (other !== term) swaps.push([term, other]);
  // All the first words together (the data's own), then one swap at a time.
  const all = canonical(base);
  if (all !== base) variants.add(all);
  for (const [term, other] of swaps) {
    if (variants.size >= MAX_VARIANTS) break;
    variants.add(replaceWord(base, term, other));
  }
  return [...variants].slice(0, MAX_VARIANTS);
}

/** Each term of the vocabulary replaced by its group's first, longest terms first, once each. */
function canonical(text: string): string {
  const pairs = GROUPS.flatMap((group) => group.slice(1).map((term) => [term, group[0]!] as const));
  pairs.sort((a, b) => b[0].length - a[0].length);
  const spans: Array<{ start: number; end: number; by: string }> = [];
  for (const [term, by] of pairs) {
    const match = new RegExp(`(^|[^a-z0-9])(${asLiteral(term)})($|[^a-z0-9])`).exec(text);
    if (!match) continue;
    const start = match.index + match[1]!.length;
    const end = start + term.length;
    if (spans.some((s) => start < s.end && end > s.start)) continue;
    spans.push({ start, end, by });
  }
  spans.sort((a, b) => b.start - a.start);
  let out = text;
  for (const { start, end, by } of spans) out = `${out.slice(0, start)}${by}${out.slice(end)}`;
  return out;
}

const asLiteral = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const replaceWord = (text: string, term: string, other: string) =>
  text.replace(new RegExp(`(^|[^a-z0-9])${asLiteral(term)}($|[^a-z0-9])`), `$1${other}$2`);
