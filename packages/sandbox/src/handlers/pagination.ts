import { z } from "zod";
import { intParam } from "../validation.js";

/** `limit` and `offset`; limits and defaults differ per route (spec part 4, pagination). */
export function pageQuery(maxLimit: number, defaultLimit: number) {
  return {
    limit: intParam(1, maxLimit, defaultLimit),
    offset: intParam(0, 1_000_000, 0),
  };
}

/** The `{ items, total }` envelope of CalendarEventListResponse, used by every list. */
export function page<T>(items: readonly T[], query: { limit: number; offset: number }) {
  return { items: items.slice(query.offset, query.offset + query.limit), total: items.length };
}

/** Exact, case-insensitive, trimmed: how `name` filters compare (spec part 4). */
export function sameName(candidate: string | null, filter: string): boolean {
  return candidate !== null && candidate.toLowerCase() === filter.trim().toLowerCase();
}

export const nameFilter = z.string().max(255);
