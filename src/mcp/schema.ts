import { z } from "zod";

const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);
const UUID_PATTERN =
  "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

/**
 * JSON Schema for a listing, trimmed of what costs context and tells the model nothing: the
 * dialect (MCP's default), JavaScript's safe-integer bounds, regexes behind a named format,
 * an empty schema for "any value" (written `true`), and, in outputs, the strictness keywords (every field is always present; clients validate
 * against types). Nullable types are written `anyOf` with `null`, which every client reads
 * (a type array is not portable). Validation itself uses the zod schemas, untrimmed.
 */
export function listedSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return compact(rest, io) as Record<string, unknown>;
}

function compact(node: unknown, io: "input" | "output"): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, io));
  if (!node || typeof node !== "object") return node;
  const source = node as Record<string, unknown>;
  if (Array.isArray(source.type)) return compact(portable(source), io);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if ((key === "minimum" || key === "maximum") && SAFE_INTEGER_BOUNDS.has(value as number))
      continue;
    if (io === "output" && (key === "required" || key === "additionalProperties")) continue;
    if (key === "pattern" && value === UUID_PATTERN) {
      out.format = "uuid";
      continue;
    }
    // A named format says it all; zod also spells date-times out as a long regex.
    if (key === "pattern" && "format" in source) continue;
    // Any value, said as `true` rather than an empty schema that strict linters read as untyped.
    if (key === "additionalProperties" && isEmptySchema(value)) {
      out[key] = true;
      continue;
    }
    // JSON object keys are strings anyway.
    if (key === "propertyNames" && JSON.stringify(value) === '{"type":"string"}') continue;
    out[key] =
      key === "properties"
        ? Object.fromEntries(
            Object.entries(value as Record<string, unknown>).map(([n, v]) => [n, compact(v, io)]),
          )
        : compact(value, io);
  }
  return out;
}

/** `{type: ["string", "null"], …}` as `{anyOf: [{type: "string", …}, {type: "null"}]}`. */
function portable(node: Record<string, unknown>): Record<string, unknown> {
  const { type, description, title, ...rest } = node;
  const types = type as string[];
  const branches = types.map((t) => (t === "null" ? { type: "null" } : { type: t, ...rest }));
  return {
    ...(description === undefined ? {} : { description }),
    ...(title === undefined ? {} : { title }),
    anyOf: branches,
  };
}

const isEmptySchema = (value: unknown) =>
  typeof value === "object" && value !== null && Object.keys(value).length === 0;
