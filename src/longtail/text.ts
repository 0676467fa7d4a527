/**
 * Words for the operation search (search.ts): folding, negation, a light French and English
 * stemmer, and a bounded edit distance for ids typed with a slip.
 */
import { folded } from "../fold.js";
import { NEGATIONS } from "./grammar.js";

/** The words of a text as written (accents and case kept), numbers left out. */
export function rawWords(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter((w) => w !== "" && !/^\p{N}+$/u.test(w));
}

/** A word folded: accents and case dropped; what is left of other letters splits it (Cœur). */
export const foldWord = (word: string): string[] =>
  folded(word)
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");

/** Folded words: accents and case dropped, apostrophes split (l'alerte), numbers left out. */
export const words = (text: string): string[] => rawWords(text).flatMap(foldWord);

/**
 * The clauses of a text, each as its affirmed words as written: what follows a negation is
 * dropped. "Never calls the external provider" does not call it; "sans appel payant" asks for
 * no call.
 */
export function affirmedClauses(text: string): string[][] {
  return text.split(/[.;:,()!?\n]/).map((clause) => {
    const all = rawWords(clause);
    const negation = all.findIndex((w) => foldWord(w).some((f) => NEGATIONS.has(f)));
    return negation < 0 ? all : all.slice(0, negation);
  });
}

export const affirmedWords = (text: string): string[] => affirmedClauses(text).flat();

/**
 * A past participle ("lancé", "réglée", "attached") describes a record more than it asks.
 * Four letters at least before the ending: "crée" is an imperative.
 */
export const looksParticiple = (raw: string): boolean =>
  /\p{L}{4}(é|ée|és|ées|ed)$/u.test(raw.toLowerCase());

/**
 * Suffixes removed by the light stemmer, longest first; the first that leaves at least three
 * letters is taken. French and English share it, so "alerte", "alerts" and "alert" meet, and so
 * do "remboursement", "rembourser" and "remboursés".
 */
const SUFFIXES = [
  "ements",
  "ement",
  "ments",
  "ment",
  "ations",
  "ation",
  "ions",
  "ion",
  "ings",
  "ing",
  "ers",
  "er",
  "ees",
  "ee",
  "es",
  "ed",
  "ez",
  "e",
  "s",
  "x",
];

export function stem(word: string): string {
  if (word.length <= 3 || /(os|us|ss)$/.test(word)) return word; // clos, status, process
  if (word.endsWith("ies") && word.length > 4) return `${word.slice(0, -3)}y`;
  for (const suffix of SUFFIXES) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      return word.slice(0, -suffix.length);
    }
  }
  return word;
}

/**
 * How many edits apart a and b are (insertions, deletions, substitutions, swaps of neighbours),
 * or Infinity beyond `max`: Damerau-Levenshtein on three rows, given up once a row exceeds max.
 */
export function editsWithin(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return Infinity;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
    }
    if (Math.min(...row) > max) return Infinity;
    before = previous;
    previous = row;
  }
  return previous[b.length]! <= max ? previous[b.length]! : Infinity;
}
