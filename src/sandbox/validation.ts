import { z } from "zod";
import { describeIssue } from "../field-errors.js";
import { invalid } from "./problem.js";

/** Parses with `schema` or throws a 422 naming every failing field and rule. */
export function parseOrRefuse<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix = "",
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalid(result.error.issues.map((issue) => describeIssue(issue, prefix)));
}

/** An integer query parameter given as a decimal string, with bounds and a default. */
export function intParam(min: number, max: number, fallback: number) {
  return z
    .string()
    .regex(/^-?\d{1,12}$/, "must be an integer")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .default(fallback);
}

/** Any 8-4-4-4-12 hex identifier, as a typical server's UUID type accepts; unknown ones are 404. */
export const uuid = z.guid("must be a UUID");
