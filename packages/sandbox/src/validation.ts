import { describeIssue } from "@portfolio-mcp/field-errors";
import { z } from "zod";
import { jsonSchemaOverrides } from "./models/common.js";
import { invalid } from "./problem.js";

export { uuid } from "./models/common.js";

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

/**
 * An integer query parameter given as a decimal string, with bounds and a default. The export
 * publishes it as the integer it stands for.
 */
export function intParam(min: number, max: number, fallback: number) {
  const schema = z
    .string()
    .regex(/^-?\d{1,12}$/, "must be an integer")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .default(fallback);
  jsonSchemaOverrides.add(schema, {
    type: "integer",
    minimum: min,
    maximum: max,
    default: fallback,
  });
  return schema;
}

/** A boolean query parameter, `true` or `false`; published as a boolean. */
export function boolParam() {
  const schema = z
    .enum(["true", "false"], { error: "must be true or false" })
    .transform((v) => v === "true");
  jsonSchemaOverrides.add(schema, { type: "boolean" });
  return schema;
}
