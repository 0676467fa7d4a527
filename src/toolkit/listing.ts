import type { z } from "zod";
import type { OperationId, OperationInput } from "../api/catalogue.js";
import { asListPage } from "../api/response.js";
import type { ToolContext } from "./definitions.js";

export { folded } from "../fold.js";

import { type Fitted, fitToBudget, type ListOutput, listOutput } from "./budget.js";
import { withNames } from "./names.js";

/** Bounds of an `all_pages` walk: enough for a whole portfolio, never unbounded. */
export const WALK_MAX_PAGES = 25;
export const WALK_MAX_ITEMS = 2_000;

interface ListCall<T extends object> {
  operation: OperationId;
  query: Record<string, unknown>;
  path?: Record<string, unknown>;
  present: (raw: unknown) => T & { id: string };
  narrowHint: string;
  /** The API's largest page, used by walks. */
  maxLimit: number;
  /** What the list may take of the result, when something else shares it (a narrative). */
  budget?: number;
  /** A filter served here on a list the API gives whole. */
  keep?: (raw: unknown) => boolean;
}

/** One page, projected, its ids named (toolkit/names.ts) and fitted to the budget. */
export async function listPage<T extends object>(
  call: ListCall<T>,
  ctx: ToolContext,
): Promise<Fitted<T>> {
  const page = asListPage(await fetchPage(call, call.query, ctx));
  const offset = typeof call.query.offset === "number" ? call.query.offset : 0;
  const { keep } = call;
  const items = keep ? page.items.filter((raw) => keep(raw)) : page.items;
  return fitToBudget(
    listOutput(
      await withNames(items.map(call.present), ctx),
      keep ? items.length : page.total,
      offset,
    ),
    call.narrowHint,
    call.budget,
  );
}

/**
 * Every page, deduplicated by id: a walk is not a snapshot, records can move between pages
 * (spec part 4). Reports progress per page when the client asked for it.
 */
export async function walkPages<T extends object>(
  call: ListCall<T>,
  ctx: ToolContext,
): Promise<Fitted<T>> {
  const limit = typeof call.query.limit === "number" ? call.query.limit : call.maxLimit;
  const start = typeof call.query.offset === "number" ? call.query.offset : 0;
  const seen = new Map<string, T>();
  let total = 0;
  let offset = start;
  let pages = 0;
  while (pages < WALK_MAX_PAGES && seen.size < WALK_MAX_ITEMS) {
    const page = asListPage(await fetchPage(call, { ...call.query, limit, offset }, ctx));
    pages++;
    total = page.total;
    for (const raw of page.items) {
      const item = call.present(raw);
      if (!seen.has(item.id)) seen.set(item.id, item);
    }
    await ctx.progress(
      Math.min(offset + page.items.length, total),
      total,
      `${seen.size} of ${total}`,
    );
    offset += page.items.length;
    if (page.items.length === 0 || offset >= total) break;
  }
  const items = await withNames([...seen.values()], ctx);
  const complete = offset >= total;
  const out: ListOutput<T> = { items, total, offset: start, next_offset: complete ? null : offset };
  if (!complete)
    out.note = `Stopped after ${pages} pages (${items.length} items); continue with offset=${offset}.`;
  return fitToBudget(out, call.narrowHint);
}

/**
 * A filter the API does not offer (a part of a name, a date range), served here: every page is
 * walked, within the walk's bounds, and only matching items are kept; `offset` and `limit`
 * then apply to the matches. The note says when the walk stopped before the end.
 */
export async function filteredPage<T extends object>(
  call: ListCall<T>,
  keep: (raw: unknown) => boolean,
  page: { offset: number; limit: number },
  ctx: ToolContext,
): Promise<Fitted<T>> {
  const matches = new Map<string, T>();
  let total = 0;
  let offset = 0;
  let pages = 0;
  while (pages < WALK_MAX_PAGES && offset < WALK_MAX_ITEMS) {
    const batch = asListPage(
      await fetchPage(call, { ...call.query, limit: call.maxLimit, offset }, ctx),
    );
    pages++;
    total = batch.total;
    for (const raw of batch.items) {
      if (!keep(raw)) continue;
      const item = call.present(raw);
      if (!matches.has(item.id)) matches.set(item.id, item);
    }
    offset += batch.items.length;
    await ctx.progress(Math.min(offset, total), total, `searched ${offset} of ${total}`);
    if (batch.items.length === 0 || offset >= total) break;
  }
  const found = [...matches.values()];
  const out = listOutput(
    await withNames(found.slice(page.offset, page.offset + page.limit), ctx),
    found.length,
    page.offset,
  );
  if (offset < total)
    out.note = `Searched the first ${offset} of ${total} records only (the server walks at most ${WALK_MAX_ITEMS}); narrow the query with the API's own filters to search the rest.`;
  return fitToBudget(out, call.narrowHint);
}

function fetchPage<T extends object>(
  call: ListCall<T>,
  query: Record<string, unknown>,
  ctx: ToolContext,
): Promise<unknown> {
  const input = { query, ...(call.path ? { path: call.path } : {}) } as OperationInput<OperationId>;
  return ctx.api
    .call(call.operation, input, { signal: ctx.signal, delegatedUser: ctx.session.delegatedUser })
    .then((r) => r.data);
}

export type ListResult<S extends z.ZodType> = ListOutput<z.output<S>>;
