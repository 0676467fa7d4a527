import { z } from "zod";
import { component, date, pageOf, uuid } from "./common.js";
import { DOCUMENT_CATEGORIES } from "./documents.js";

/** Search: shapes not shown by the spec, the sandbox's choice (README). */

export const SEARCH_TYPES = ["operation", "deal", "operateur", "fond", "spv", "document"] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export const searchHitSchema = z.object({
  type: z.enum(SEARCH_TYPES),
  id: uuid,
  title: z.string(),
  /** The record's code when it has one: SIREN, external id, document code. */
  code: z.string().nullable(),
  /** What matched: the name, a code, or the text of a document. */
  matched_on: z.enum(["name", "code", "text"]),
  /** The passage of a document's text that matched; null for the other matches. */
  snippet: z.string().nullable(),
  /** 0 to 1, higher is closer: an exact name first, a mention in a text last. */
  score: z.number().min(0).max(1),
});
export type SearchHit = z.output<typeof searchHitSchema>;

export const searchResultsSchema = component("SearchResults", pageOf(searchHitSchema));

export const documentHitSchema = z.object({
  document_id: uuid,
  code: z.string(),
  name: z.string(),
  category: z.enum(DOCUMENT_CATEGORIES),
  document_date: date.nullable(),
  dataroom: z.object({ id: uuid, name: z.string() }).nullable(),
  score: z.number().min(0).max(1),
  /** Up to three lines of the document that contain the query's words. */
  highlights: z.array(z.string()),
});

export const documentSearchResultsSchema = component(
  "DocumentSearchResults",
  pageOf(documentHitSchema),
);
