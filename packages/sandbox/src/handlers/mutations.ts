import { z } from "zod";
import { invalid } from "../problem.js";
import { json, type RouteResult } from "../routing.js";

/**
 * What the write routes of the sandbox share: the update model of spec part 2 (an absent field
 * is left as it is, null clears a nullable one) and the upsert by external id.
 */

/** The fields a body sends: absent ones (undefined) left out, null kept since it clears. */
export function sentFields<T extends object>(body: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(body).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

/** 422 when a PATCH body sends nothing to change (`ignore`: fields that change nothing alone). */
export function requireChanges(body: object, ignore: readonly string[] = []): void {
  const sent = Object.keys(sentFields(body)).filter((field) => !ignore.includes(field));
  if (sent.length > 0) return;
  throw invalid([
    { field: "body", rule: "min 1 field", message: "send at least one field to change" },
  ]);
}

/** JSON merge of an open object: sent keys replace, null removes a key (spec part 2, `data`). */
export function mergeObject<T>(
  current: Record<string, T>,
  patch: Record<string, T | null>,
): Record<string, T> {
  const merged: Record<string, T> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** Whether two records differ, ignoring the fields a write stamps itself. */
export function differs<T extends object>(a: T, b: T, ignore: readonly (keyof T)[]): boolean {
  const strip = (record: T) =>
    JSON.stringify(Object.entries(record).filter(([key]) => !ignore.includes(key as keyof T)));
  return strip(a) !== strip(b);
}

/**
 * An id in the source system that synchronises a record: not a UUID (spec part 2: service
 * UUIDs and external identifiers are different values), compared exactly.
 */
export const externalId = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
    "must be 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
  );
export const externalParams = z.strictObject({ external_id: externalId });

/** An upsert's answer: 201 when it created the record, 200 when it updated (or kept) it. */
export function upserted(record: unknown, created: boolean): RouteResult {
  return json(record, created ? 201 : 200);
}

export const isoAt = (ms: number) => new Date(ms).toISOString();
