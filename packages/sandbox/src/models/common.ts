import { z } from "zod";

/**
 * Building blocks of the sandbox's models. Each model is a zod schema: it types the records,
 * and the per-key export turns it into JSON Schema (zod 4 `z.toJSONSchema`), so the contract
 * cannot drift from what the handlers return.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/**
 * Schemas published as `#/components/schemas/<id>` in the export, rather than inline. Only
 * response models go here: a request body is described inline, in its input form.
 */
export const components = z.registry<{ id: string }>();

/** Registers a response model under a component name. */
export function component<S extends z.ZodType>(id: string, schema: S): S {
  components.add(schema, { id });
  return schema;
}

/**
 * JSON Schema to publish instead of the one zod would derive, for schemas whose wire form
 * differs from their parsed form (query integers arrive as strings).
 */
export const jsonSchemaOverrides = z.registry<Record<string, unknown>>();

/**
 * Any JSON value. Bodies come from JSON.parse, so nothing else can arrive; published as `{}`
 * because the keys of open objects depend on the source (spec part 2, conventions).
 */
export const jsonValue = z.custom<Json>(() => true);
export const jsonObject = z.record(z.string(), jsonValue);

/** Resource ids are UUIDs (spec part 2), compared case-insensitively. */
export const uuid = z.guid("must be a UUID");
/** A business date, YYYY-MM-DD, without time zone. */
export const date = z.iso.date("must be a date (YYYY-MM-DD)");
/** A date-time with its time zone. */
export const dateTime = z.iso.datetime({
  offset: true,
  error: "must be an ISO 8601 date-time with a time zone",
});

/** The spec's pattern for decimal amounts serialised as strings (part 2, Deal). */
export const DECIMAL_PATTERN = /^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$/;
export const decimal = z.string().regex(DECIMAL_PATTERN, "must be a decimal number as a string");

/** The `{ items, total }` page of CalendarEventListResponse, used by every list. */
export function pageOf<S extends z.ZodType>(item: S) {
  return z.object({ items: z.array(item), total: z.int().min(0) });
}
