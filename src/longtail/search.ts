/**
 * Ranking for `find_api_operations`: which of the key's operations does what a portfolio manager
 * asked, in French or English. Pure: the caller hands over the operations (from the key's
 * contract) and gets ids with scores back.
 *
 * BM25F over six fields (id words, summary, description, parameter names, for a read the fields
 * its writes name, family) on folded, lightly stemmed words (text.ts). The query's words are
 * widened with the portfolio's bilingual vocabulary (toolkit/vocabulary.ts, the one search_portfolio
 * speaks too); negated words are dropped, record names
 * and the content after a colon weigh less. Its wording nudges towards reads (a question) or
 * writes (a leading verb of change), and towards lists when it names several records. An
 * operation id typed as such, or with a slip, ranks first. The index is built once; a search
 * walks only the postings of the query's terms.
 */
import { folded } from "../fold.js";
import { LEXICON } from "../toolkit/vocabulary.js";
import { POLITE_CUES, READ_CUES, STOPWORDS, WRITE_VERBS } from "./grammar.js";
import {
  affirmedClauses,
  affirmedWords,
  editsWithin,
  foldWord,
  looksParticiple,
  stem,
  words,
} from "./text.js";

export interface SearchableOperation {
  /** operationId, e.g. "alert_acknowledge" */
  id: string;
  /** the tag, e.g. "alerts" */
  family: string;
  kind: "read" | "write";
  summary: string;
  description: string;
  /** names of path and query parameters and of top-level body fields */
  parameters: string[];
}

export interface SearchOptions {
  family?: string;
  kind?: "read" | "write";
  /** at most this many results; 5 unless told */
  limit?: number;
}

export interface SearchHit {
  id: string;
  score: number;
}

type Field = "id" | "summary" | "description" | "parameters" | "related" | "family";

/** How much a word counts in each field: the id and summary say what an operation does. */
const FIELD_WEIGHT: Record<Field, number> = {
  id: 3,
  summary: 2.5,
  description: 0.8,
  parameters: 0.8,
  related: 0.8,
  family: 1.5,
};
/** Length normalisation per field: long descriptions should not drown a word. */
const FIELD_B: Record<Field, number> = {
  id: 0.3,
  summary: 0.5,
  description: 0.75,
  parameters: 0.5,
  related: 0.3,
  family: 0,
};
const K1 = 1.2;
/** The wording's nudge towards reads or writes: mild, a tie-breaker more than a filter. */
const INTENT_BOOST = 1.15;
/** A lexicon expansion counts a little less than the word the user typed. */
const EXPANSION_WEIGHT = 0.9;
/** Several records named in a question ("les tâches", "templates") ask for a list: a nudge. */
const LIST_CUE: Concept = {
  typed: null,
  expansions: ["list"],
  plural: false,
  weight: 0.5,
  position: 0,
};
/** Verbs of change that are not the request's verb describe records ("l'import lancé"). */
const LATER_VERB_WEIGHT = 0.5;
/** What follows a colon is the content of the request ("crée une tâche : relancer le notaire"). */
const CONTENT_WEIGHT = 0.5;
/** A capitalised word inside the request names a record: it does not say which operation. */
const NAME_WEIGHT = 0.3;

/** A word that names several things: "tâches", "taxonomies", "SPVs" (not "status"). */
const looksPlural = (word: string): boolean =>
  word.length > 3 && /[sx]$/.test(word) && !/(ss|us|is)$/.test(word) && !STOPWORDS.has(word);

const proseTerms = (text: string): string[] =>
  affirmedWords(text)
    .flatMap(foldWord)
    .filter((w) => !STOPWORDS.has(w))
    .map(stem);

/** Identifiers (ids, parameter names) keep every word: "me" in `me_get` means something. */
const identifierTerms = (name: string): string[] => words(name).map(stem);

// ---------------------------------------------------------------------------------------------
// The lexicon, stemmed once

interface Lexicon {
  /** single words (stemmed) → the contract's words (stemmed) */
  byStem: Map<string, string[]>;
  /** exact folded forms, for words whose stem is ambiguous ("reporte" is not "report") */
  bySurface: Map<string, string[]>;
  /** multi-word expressions as stem sequences, by their first stem, longest first */
  phrases: Map<string, Array<{ stems: string[]; targets: string[] }>>;
  /** the contract's verbs of change, stemmed */
  writeVerbs: Set<string>;
}

let lexicon: Lexicon | undefined;

function compiledLexicon(): Lexicon {
  if (lexicon) return lexicon;
  const byStem = new Map<string, string[]>();
  const bySurface = new Map<string, string[]>();
  const phrases: Lexicon["phrases"] = new Map();
  const add = (map: Map<string, string[]>, key: string, targets: string[]) =>
    map.set(key, [...new Set([...(map.get(key) ?? []), ...targets])]);
  for (const [target, synonyms] of LEXICON) {
    const targets = words(target).map(stem);
    for (const synonym of synonyms.split(",")) {
      const entry = synonym.trim();
      const stems = words(entry).map(stem);
      // The contract's own words ("repayment schedule" in its group) are not widened to
      // themselves: as typed, each word counts in full.
      if (stems.join(" ") === targets.join(" ")) continue;
      if (entry.startsWith("=")) add(bySurface, folded(entry.slice(1)), targets);
      // Several words ("tableau d'amortissement", "procès-verbal"): an expression.
      else if (stems.length > 1)
        phrases.set(stems[0]!, [...(phrases.get(stems[0]!) ?? []), { stems, targets }]);
      else if (stems.length === 1) add(byStem, stems[0]!, targets);
    }
  }
  for (const list of phrases.values()) list.sort((a, b) => b.stems.length - a.stems.length);
  lexicon = { byStem, bySurface, phrases, writeVerbs: new Set(WRITE_VERBS.map(stem)) };
  return lexicon;
}

// ---------------------------------------------------------------------------------------------
// The query

/**
 * One thing the user said: the word as typed (stemmed) and what the lexicon makes of it. An
 * operation scores the better of the two, so a French word is not counted twice when it matches
 * both a French parameter name (`operateur_id`) and its English translation (operator).
 */
interface Concept {
  typed: string | null;
  expansions: string[];
  plural: boolean;
  /** less than 1 for what is not the request itself: a record's name, the content after ":" */
  weight: number;
  /** where it starts in the query */
  position: number;
  /** a verb of change here is the request's verb: it leads its clause, not a participle */
  imperative?: boolean;
}

interface Query {
  concepts: Concept[];
  intent: "read" | "write" | null;
}

interface QueryWord {
  word: string;
  weight: number;
  participle: boolean;
  /** the first word of its clause that says something: where an imperative verb stands */
  leads: boolean;
}

/**
 * The query's affirmed words, each with a weight. "Ajoute une note : comité du 12 mars" asks for a
 * note; what follows the colon is its content. A capitalised word inside the request is a name
 * ("Les Terrasses", "Sophie"), which says which record, not which operation.
 */
function queryWords(text: string, lex: Lexicon): QueryWord[] {
  const colon = text.indexOf(":");
  const parts = colon < 0 ? [text] : [text.slice(0, colon), text.slice(colon + 1)];
  return parts.flatMap((part, p) =>
    affirmedClauses(part).flatMap((clause, c) => {
      let leading = true;
      return clause.flatMap((raw, i) =>
        foldWord(raw).map((word): QueryWord => {
          const known = lex.bySurface.has(word) || lex.byStem.has(stem(word));
          const isName = (c > 0 || i > 0) && /^\p{Lu}\p{Ll}/u.test(raw) && !known;
          const weight = (p > 0 ? CONTENT_WEIGHT : 1) * (isName ? NAME_WEIGHT : 1);
          const filler = STOPWORDS.has(word) || POLITE_CUES.has(word);
          const leads = leading && !filler;
          if (!filler) leading = false;
          return { word, weight, participle: looksParticiple(raw), leads };
        }),
      );
    }),
  );
}

function parseQuery(text: string): Query {
  const lex = compiledLexicon();
  const query = queryWords(text, lex);
  const concepts = conceptsOf(query, lex);
  // A request's verb of change leads its clause ("acquitte l'alerte", "…, close it"); other
  // ones describe records: "la note que j'ai ajoutée", "l'import lancé", "en attente de
  // confirmation".
  const isChange = (c: Concept) =>
    [c.typed ?? "", ...c.expansions].some((t) => lex.writeVerbs.has(t));
  concepts.sort((a, b) => a.position - b.position);
  const verb = concepts.find((c) => isChange(c) && c.imperative);
  for (const c of concepts) if (c !== verb && isChange(c)) c.weight *= LATER_VERB_WEIGHT;
  return { concepts, intent: intentOf(text, query, verb) };
}

/** What the query's words mean: its expressions first, then each word left on its own. */
function conceptsOf(query: QueryWord[], lex: Lexicon): Concept[] {
  const stems = query.map((q) => stem(q.word));
  const concepts: Concept[] = [];
  const used = new Array<boolean>(stems.length).fill(false);

  // Expressions first ("tableau de bord", "en retard"): their words do not count on their own.
  stems.forEach((first, i) => {
    for (const { stems: phrase, targets } of lex.phrases.get(first) ?? []) {
      if (phrase.every((s, j) => stems[i + j] === s && !used[i + j])) {
        const span = query.slice(i, i + phrase.length);
        span.forEach((_, j) => {
          used[i + j] = true;
        });
        concepts.push({
          typed: null,
          expansions: targets,
          plural: span.some((q) => looksPlural(q.word)),
          weight: Math.min(...span.map((q) => q.weight)),
          position: i,
          imperative: span[0]!.leads,
        });
      }
    }
  });
  query.forEach(({ word, weight, participle, leads }, i) => {
    if (used[i]) return;
    const expansions = lex.bySurface.get(word) ?? lex.byStem.get(stems[i]!) ?? [];
    const typed = STOPWORDS.has(word) || lex.bySurface.has(word) ? null : stems[i]!;
    if (typed !== null || expansions.length > 0)
      concepts.push({
        typed,
        expansions,
        plural: looksPlural(word),
        weight,
        position: i,
        imperative: leads && !participle,
      });
  });
  return concepts;
}

/**
 * Asking or changing: whichever the request says first ("quelles sont nos couleurs de
 * marque ?" asks). A question mark asks, unless it only makes a request polite ("can you
 * acknowledge it?"). Names and content do not count.
 */
function intentOf(text: string, query: QueryWord[], verb: Concept | undefined): Query["intent"] {
  const questionWord = query.findIndex((q) => q.weight === 1 && READ_CUES.has(q.word));
  const polite = query.slice(0, 3).some((q) => POLITE_CUES.has(q.word));
  const questionMark = text.trim().endsWith("?") && !polite ? 0 : Infinity;
  const asksAt = questionWord >= 0 ? questionWord : questionMark;
  const changesAt = verb !== undefined && verb.weight === 1 ? verb.position : Infinity;
  return asksAt < changesAt ? "read" : changesAt < asksAt ? "write" : null;
}

/** An operation id typed by the user: the whole query, or a word of it with an underscore. */
function idCandidates(query: string): string[] {
  const tokens = folded(query)
    .split(/[^a-z0-9_]+/)
    .filter(Boolean);
  return tokens.length === 1 ? tokens : tokens.filter((t) => t.includes("_"));
}

/**
 * The fields a read returns, taken from its writes: `settings_business_get` returns what
 * `settings_business_update` sets, so "what is our DSCR floor?" can find the read.
 */
function relatedFields(op: SearchableOperation, all: readonly SearchableOperation[]): string[] {
  if (op.kind !== "read" || !op.id.endsWith("_get")) return [];
  const resource = op.id.slice(0, -"_get".length);
  return all
    .filter((w) => w.kind === "write" && w.id.replace(/_[a-z]+$/, "") === resource)
    .flatMap((w) => w.parameters)
    .filter((p) => !op.parameters.includes(p));
}

// ---------------------------------------------------------------------------------------------
// The index

export class OperationIndex {
  readonly #operations: readonly SearchableOperation[];
  /** term → [operation index, BM25F weight of the term in it] */
  readonly #postings = new Map<string, Array<[number, number]>>();

  constructor(operations: readonly SearchableOperation[]) {
    this.#operations = operations;
    const fields = operations.map(
      (op): Record<Field, string[]> => ({
        id: identifierTerms(op.id),
        summary: proseTerms(op.summary),
        description: proseTerms(op.description),
        parameters: op.parameters.flatMap(identifierTerms),
        related: relatedFields(op, operations).flatMap(identifierTerms),
        family: identifierTerms(op.family),
      }),
    );
    const names = Object.keys(FIELD_WEIGHT) as Field[];
    const averageLength = Object.fromEntries(
      names.map((f) => [
        f,
        fields.reduce((n, d) => n + d[f].length, 0) / (fields.length || 1) || 1,
      ]),
    ) as Record<Field, number>;

    // BM25F: per field, term frequency normalised by length and weighted; then one saturation.
    const pseudo: Array<Map<string, number>> = fields.map((doc) => {
      const tf = new Map<string, number>();
      for (const f of names) {
        const norm = 1 - FIELD_B[f] + (FIELD_B[f] * doc[f].length) / averageLength[f];
        for (const t of doc[f]) tf.set(t, (tf.get(t) ?? 0) + FIELD_WEIGHT[f] / norm);
      }
      return tf;
    });
    const documentFrequency = new Map<string, number>();
    for (const tf of pseudo)
      for (const t of tf.keys()) documentFrequency.set(t, (documentFrequency.get(t) ?? 0) + 1);
    const n = operations.length;
    pseudo.forEach((tf, doc) => {
      for (const [t, freq] of tf) {
        const df = documentFrequency.get(t)!;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        const list = this.#postings.get(t) ?? [];
        list.push([doc, (idf * freq) / (K1 + freq)]);
        this.#postings.set(t, list);
      }
    });
  }

  /** Per operation: the better of the word as typed and the sum of its expansions. */
  #conceptScores({ typed, expansions }: Concept): Map<number, number> {
    const expanded = new Map<number, number>();
    // A concept spelled in several words ("repayment schedule") weighs about one word.
    const each = EXPANSION_WEIGHT / Math.sqrt(new Set(expansions).size || 1);
    for (const term of new Set(expansions)) {
      for (const [doc, w] of this.#postings.get(term) ?? []) {
        expanded.set(doc, (expanded.get(doc) ?? 0) + each * w);
      }
    }
    for (const [doc, w] of typed === null ? [] : (this.#postings.get(typed) ?? [])) {
      expanded.set(doc, Math.max(expanded.get(doc) ?? 0, w));
    }
    return expanded;
  }

  /** What each thing the user said brought to an operation's score: for tuning and tests. */
  explain(query: string, id: string): Array<[string, number]> {
    const doc = this.#operations.findIndex((op) => op.id === id);
    return parseQuery(query).concepts.map((c) => [
      `${c.typed ?? "-"}→${c.expansions.join("+")}${c.weight < 1 ? ` ×${c.weight}` : ""}`,
      Math.round(c.weight * (this.#conceptScores(c).get(doc) ?? 0) * 1000) / 1000,
    ]);
  }

  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const limit = options.limit ?? 5;
    const eligible = (op: SearchableOperation) =>
      (options.family === undefined || op.family === options.family) &&
      (options.kind === undefined || op.kind === options.kind);

    const { concepts, intent } = parseQuery(query);
    const known = (c: Concept) => c.expansions.length > 0 || this.#postings.has(c.typed ?? "");
    const asksForList = intent !== "write" && concepts.some((c) => c.plural && known(c));
    const scores = new Float64Array(this.#operations.length);
    for (const concept of asksForList ? [...concepts, LIST_CUE] : concepts) {
      for (const [doc, score] of this.#conceptScores(concept))
        scores[doc]! += concept.weight * score;
    }
    const hits: SearchHit[] = [];
    this.#operations.forEach((op, doc) => {
      const score = scores[doc]!;
      if (score <= 0 || !eligible(op)) return;
      hits.push({ id: op.id, score: intent === op.kind ? score * INTENT_BOOST : score });
    });

    // An id typed as such (or nearly: a slip or two) goes first.
    const top = Math.max(0, ...hits.map((h) => h.score));
    for (const candidate of idCandidates(query)) {
      // A slip or two in a long id; none in a plain word ("search" is an id, "serch" a typo).
      const allowed = candidate.includes("_") ? Math.max(1, Math.floor(candidate.length / 5)) : 0;
      for (const op of this.#operations) {
        if (!eligible(op)) continue;
        const distance = op.id === candidate ? 0 : editsWithin(candidate, op.id, allowed);
        if (distance === Infinity) continue;
        const score = top + 10 - distance;
        const hit = hits.find((h) => h.id === op.id);
        if (hit) hit.score = Math.max(hit.score, score);
        else hits.push({ id: op.id, score });
      }
    }

    return hits
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map((h) => ({ id: h.id, score: Math.round(h.score * 1000) / 1000 }));
  }
}
