import { z } from "zod";
import type { OperationId } from "../api/catalogue.js";
import { withoutShareTokens } from "../api/response.js";
import type { AppViewName } from "../apps/catalog.js";
import { isPlain, vouchPlain } from "../neutralise.js";
import type { Fitted } from "./budget.js";
import {
  defineTool,
  type Family,
  READ_ONLY,
  type ToolContext,
  type ToolDefinition,
} from "./definitions.js";
import { filteredPage, listPage, WALK_MAX_ITEMS, walkPages } from "./listing.js";
import { followUps, type NextStep, nextSteps, renderSteps } from "./next-steps.js";
import { detail, record } from "./present.js";

/** The shapes and builders every read tool shares: one record, or one list with its paging. */

const allPages = z
  .boolean()
  .optional()
  .describe("Walks pages while the result fits (2,000 items at most).");

export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    total: z.int(),
    offset: z.int(),
    next_offset: z
      .int()
      .nullable()
      .describe("Pass as offset for the next page; null on the last page."),
    note: z.string().optional(),
    next: nextSteps,
  });

/** A list result with the follow-ups of its items, named once (toolkit/next-steps.ts). */
function withNextSteps<L extends { items: object[] }>(
  fitted: { list: L; text: string; plain?: boolean },
  operation: OperationId,
  ctx: ToolContext,
): { structured: L & { next?: NextStep[] }; text: string; plain: boolean } {
  const route = ctx.api.routes.get(operation);
  const next = route ? followUps(route.path, ctx) : [];
  const plain = fitted.plain === true;
  // Found plain while rendered, and handed straight to the result: not tested again there.
  if (plain) for (const item of fitted.list.items) vouchPlain(item);
  if (next.length === 0) return { structured: fitted.list, text: fitted.text, plain };
  const steps = renderSteps(next);
  return {
    structured: { ...fitted.list, next },
    text: `${fitted.text}\n${steps}`,
    plain: plain && isPlain(steps, true),
  };
}

/** One complete record, as the API gives it, without share tokens. */
export async function fetchDetail(
  operation: OperationId,
  input: object,
  ctx: ToolContext,
): Promise<Record<string, unknown>> {
  const result = await ctx.api.call(operation, input as never, {
    signal: ctx.signal,
    delegatedUser: ctx.session.delegatedUser,
  });
  return withoutShareTokens(record(result.data));
}

/**
 * What a record tool without arguments takes: the fields to keep. Every tool declares at least
 * one input, since Gemini refuses a function whose parameters object has no property and
 * OpenAI's strict conversion an object with neither properties nor a closed shape.
 */
const fields = z
  .string()
  .max(300)
  .optional()
  .describe("Comma-separated top-level fields to keep; all when absent.");

/** The record with only the fields asked for (all when none), unknown names ignored. */
function picked(record: Record<string, unknown>, wanted: unknown): Record<string, unknown> {
  if (typeof wanted !== "string" || wanted.trim() === "") return record;
  const names = new Set(wanted.split(",").map((n) => n.trim()));
  const kept = Object.fromEntries(Object.entries(record).filter(([k]) => names.has(k)));
  return Object.keys(kept).length > 0 ? kept : record;
}

/** A tool that returns one complete record as the API gives it. */
export function detailTool(options: {
  name: string;
  title: string;
  description: string;
  family: Family;
  operation: OperationId;
  /** Its arguments; without them, the tool takes `fields` (which fields of the record to keep). */
  input?: z.ZodObject;
  toRequest?: (args: Record<string, unknown>) => object;
  /** The part of the record an argument asks for, when one does. */
  select?: (
    record: Record<string, unknown>,
    args: Record<string, unknown>,
  ) => Record<string, unknown>;
  view?: AppViewName;
}): ToolDefinition {
  return defineTool({
    ...readsOne(options),
    ...(options.view ? { view: options.view } : {}),
    input: options.input ?? z.strictObject({ fields }),
    output: detail,
    async run(args, ctx) {
      const record = await fetchDetail(
        options.operation,
        options.toRequest?.(args) ?? { path: args },
        ctx,
      );
      return {
        structured: options.select
          ? options.select(record, args)
          : options.input
            ? record
            : picked(record, args.fields),
      };
    },
  });
}

/** What every read tool over one operation declares alike: it only reads, that operation. */
function readsOne(options: {
  name: string;
  title: string;
  description: string;
  family: Family;
  operation: OperationId;
}) {
  const { name, title, description, family, operation } = options;
  return {
    kind: "run" as const,
    name,
    title,
    description,
    family,
    annotations: READ_ONLY,
    operations: [operation],
  };
}

export interface ListToolOptions<T extends { id: string }> {
  name: string;
  title: string;
  description: string;
  family: Family;
  operation: OperationId;
  item: z.ZodType<T>;
  present: (raw: unknown) => T;
  query?: z.ZodRawShape;
  path?: z.ZodRawShape;
  /**
   * Filters the API lacks, served by walking pages here: their arguments, and the predicate
   * they make (null when none was given).
   */
  local?: {
    shape: z.ZodRawShape;
    keep(args: Record<string, unknown>): ((raw: unknown) => boolean) | null;
  };
  pageable: boolean;
  narrowHint: string;
}

/** A tool over a list route: one page by default, every page with `all_pages`. */
export function listTool<T extends { id: string }>(options: ListToolOptions<T>): ToolDefinition {
  const input = z.strictObject({
    ...options.path,
    ...options.query,
    ...options.local?.shape,
    ...(options.pageable ? { all_pages: allPages } : {}),
  });
  return defineTool({
    ...readsOne(options),
    input,
    output: listOf(options.item),
    async run(args, ctx) {
      const { all_pages, ...rest } = args as Record<string, unknown> & { all_pages?: boolean };
      const fitted = await fetchList(options, rest, all_pages === true, ctx);
      return withNextSteps(fitted, options.operation, ctx);
    },
  });
}

/**
 * The page (or with `allPages` the pages) the arguments ask for: the path and the API's own
 * filters sent, the local filters applied here.
 */
async function fetchList<T extends { id: string }>(
  options: ListToolOptions<T>,
  args: Record<string, unknown>,
  allPages: boolean,
  ctx: ToolContext,
): Promise<Fitted<T>> {
  const pathNames = Object.keys(options.path ?? {});
  const localNames = Object.keys(options.local?.shape ?? {});
  const path = Object.fromEntries(Object.entries(args).filter(([k]) => pathNames.includes(k)));
  const query = Object.fromEntries(
    Object.entries(args).filter(([k]) => !pathNames.includes(k) && !localNames.includes(k)),
  );
  const call = {
    operation: options.operation,
    query,
    path: pathNames.length > 0 ? path : undefined,
    present: options.present,
    narrowHint: options.narrowHint,
    maxLimit: 200,
  };
  const keep = options.local?.keep(args) ?? null;
  // A list the API gives whole: filtered here, in one call.
  if (keep && !options.pageable) return listPage({ ...call, keep }, ctx);
  if (keep) {
    const { limit, offset, ...upstream } = query;
    const page = {
      offset: typeof offset === "number" ? offset : 0,
      limit: allPages ? WALK_MAX_ITEMS : typeof limit === "number" ? limit : 50,
    };
    return filteredPage({ ...call, query: upstream }, keep, page, ctx);
  }
  return allPages ? walkPages(call, ctx) : listPage(call, ctx);
}
