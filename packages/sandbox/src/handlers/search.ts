import { z } from "zod";
import { folded } from "../french.js";
import { DOCUMENT_CATEGORIES, type StoredDocument } from "../models/documents.js";
import {
  documentSearchResultsSchema,
  SEARCH_TYPES,
  type SearchHit,
  type SearchType,
  searchResultsSchema,
} from "../models/search.js";
import { invalid } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { uuid } from "../validation.js";
import { assertDataroomMember, openableDocuments } from "./dataroom-access.js";
import { page, pageQuery } from "./pagination.js";

/** A record as search sees it: its names, its codes, and for documents their text. */
interface Searchable {
  type: SearchType;
  id: string;
  title: string;
  codes: string[];
  text: string;
}

function searchables(state: SandboxState, documents: StoredDocument[]): Searchable[] {
  const { operations, deals, operators, funds, spvs } = state.data;
  const none = { codes: [] as string[], text: "" };
  return [
    ...operations.map((o) => ({ type: "operation" as const, id: o.id, title: o.name, ...none })),
    ...deals.map((d) => ({ type: "deal" as const, id: d.id, title: d.name, ...none })),
    ...operators.map((o) => ({
      type: "operateur" as const,
      id: o.id,
      title: o.name ?? "",
      codes: o.siren ? [o.siren] : [],
      text: "",
    })),
    ...funds.map((f) => ({ type: "fond" as const, id: f.id, title: f.name, ...none })),
    ...spvs.map((s) => ({
      type: "spv" as const,
      id: s.id,
      title: s.name,
      codes: [s.siren, s.external_id],
      text: "",
    })),
    ...documents.map((d) => ({
      type: "document" as const,
      id: d.id,
      title: d.name,
      codes: [d.code],
      text: d.text,
    })),
  ];
}

/** The words of a query, folded; words of one letter say nothing and are dropped. */
function terms(query: string): string[] {
  return [...new Set(folded(query).split(/[^\p{L}\p{N}]+/u))].filter((t) => t.length >= 2);
}

/**
 * How well a record matches: an exact name 1, a name that starts with the query 0.9, a name
 * with every word 0.8 (0.7 when the words are scattered), a code 0.95 exact or 0.75 in part,
 * every word in a document's text 0.5 to 0.6 with the number of mentions.
 */
function match(record: Searchable, query: string, words: string[]): SearchHit | null {
  const q = folded(query.trim());
  const title = folded(record.title);
  const hit = (
    matched_on: SearchHit["matched_on"],
    score: number,
    snippet: string | null = null,
  ) => ({
    type: record.type,
    id: record.id,
    title: record.title,
    code: record.codes[0] ?? null,
    matched_on,
    snippet,
    score,
  });
  if (title === q) return hit("name", 1);
  const code = record.codes.find((c) => folded(c) === q.replace(/\s+/g, ""));
  if (code) return { ...hit("code", 0.95), code };
  if (title.startsWith(q)) return hit("name", 0.9);
  if (title.includes(q)) return hit("name", 0.8);
  if (words.length > 0 && words.every((w) => title.includes(w))) return hit("name", 0.7);
  const partial = record.codes.find((c) => q.length >= 3 && folded(c).includes(q));
  if (partial) return { ...hit("code", 0.75), code: partial };
  const text = folded(record.text);
  if (words.length > 0 && words.every((w) => text.includes(w))) {
    const mentions = words.reduce((n, w) => n + text.split(w).length - 1, 0);
    return hit(
      "text",
      Math.min(0.6, 0.5 + mentions / 100),
      linesWith(record.text, words, 1)[0] ?? null,
    );
  }
  return null;
}

/** The lines of a text that mention one of the words, trimmed for display. */
function linesWith(text: string, words: string[], max: number): string[] {
  return text
    .split("\n")
    .filter((line) => words.some((w) => folded(line).includes(w)))
    .slice(0, max)
    .map((line) => (line.length > 200 ? `${line.slice(0, 199)}…` : line));
}

const TYPE_ORDER = new Map(SEARCH_TYPES.map((t, i) => [t, i]));

const typesParam = z
  .string()
  .max(200)
  .transform((value, ctx) => {
    const types = value.split(",").map((t) => t.trim());
    const unknown = types.filter((t) => !(SEARCH_TYPES as readonly string[]).includes(t));
    if (unknown.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `must be a comma-separated list of ${SEARCH_TYPES.join(", ")}; unknown: ${unknown.join(", ")}`,
      });
      return z.NEVER;
    }
    return types as SearchType[];
  });

const queryText = (max: number) =>
  z.string().trim().min(2, "must have at least 2 characters").max(max);

export const searchRoutes = [
  defineRoute({
    id: "search",
    family: "search",
    method: "GET",
    path: "/search",
    scope: "search:read",
    kind: "read",
    summary: "Search operations, deals, operators, funds, SPVs and documents",
    description:
      "Over names, codes (SIREN, external ids, document codes) and the text of documents, ignoring case and accents; best match first. Documents of a dataroom the key is not a member of are never returned, not even by name.",
    query: z.strictObject({
      q: queryText(200),
      types: typesParam.optional(),
      ...pageQuery(50, 20),
    }),
    response: { status: 200, schema: searchResultsSchema },
    example: () => ({ query: { q: "Terrasses" } }),
    handle({ query, state, key }) {
      const words = terms(query.q);
      const hits = searchables(state, openableDocuments(state, key))
        .filter((r) => query.types === undefined || query.types.includes(r.type))
        .flatMap((r) => match(r, query.q, words) ?? [])
        .sort(
          (a, b) =>
            b.score - a.score ||
            (TYPE_ORDER.get(a.type) ?? 0) - (TYPE_ORDER.get(b.type) ?? 0) ||
            a.title.localeCompare(b.title, "fr"),
        );
      return json(page(hits, query));
    },
  }),
  defineRoute({
    id: "search_documents",
    family: "search",
    method: "POST",
    path: "/search/documents",
    scope: "search:read",
    kind: "read",
    summary: "Search the indexed content of documents",
    description:
      "Documents whose indexed text holds every word of `query` (case and accents ignored), the most mentions first, with the lines that matched. A read: POST only carries the query. Documents of a dataroom the key is not a member of are left out; filtering on such a dataroom is 403.",
    body: z.strictObject({
      query: queryText(500),
      filters: z
        .strictObject({
          operation_id: uuid.optional(),
          operateur_id: uuid.optional(),
          fond_id: uuid.optional(),
          spv_id: uuid.optional(),
          category: z.enum(DOCUMENT_CATEGORIES).optional(),
          dataroom_id: uuid.optional(),
        })
        .optional(),
      limit: z.int().min(1).max(50).default(10),
      offset: z.int().min(0).max(1_000_000).default(0),
    }),
    response: { status: 200, schema: documentSearchResultsSchema },
    refusals: { 403: ["dataroom_access_denied"], 404: ["dataroom_not_found"] },
    example: () => ({ body: { query: "taux de commercialisation" } }),
    handle({ body, state, key }) {
      const words = terms(body.query);
      if (words.length === 0) {
        throw invalid([
          { field: "query", rule: "a word of 2 letters or more", message: "has no word to search" },
        ]);
      }
      const f = body.filters ?? {};
      if (f.dataroom_id !== undefined) assertDataroomMember(state, key, f.dataroom_id);
      const links: Array<[string | undefined, string]> = [
        [f.operation_id, "operation"],
        [f.operateur_id, "operateur"],
        [f.fond_id, "fond"],
        [f.spv_id, "spv"],
      ];
      const hits = openableDocuments(state, key)
        .filter(
          (d) =>
            d.text !== "" &&
            (f.category === undefined || d.category === f.category) &&
            (f.dataroom_id === undefined || d.dataroom?.id === f.dataroom_id.toLowerCase()) &&
            links.every(
              ([id, type]) =>
                id === undefined ||
                d.attachments.some(
                  (a) => a.target_type === type && a.target_id === id.toLowerCase(),
                ),
            ),
        )
        .flatMap((d) => {
          const text = folded(d.text);
          if (!words.every((w) => text.includes(w))) return [];
          const mentions = words.reduce((n, w) => n + text.split(w).length - 1, 0);
          return [
            {
              document_id: d.id,
              code: d.code,
              name: d.name,
              category: d.category,
              document_date: d.document_date,
              dataroom: d.dataroom,
              score: Math.min(1, Math.round((mentions / (words.length * 3)) * 100) / 100),
              highlights: linesWith(d.text, words, 3),
            },
          ];
        })
        .sort(
          (a, b) =>
            b.score - a.score ||
            (b.document_date ?? "").localeCompare(a.document_date ?? "") ||
            a.code.localeCompare(b.code),
        );
      return json(page(hits, body));
    },
  }),
];
