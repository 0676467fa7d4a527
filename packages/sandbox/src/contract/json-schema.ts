import { z } from "zod";
import { components, jsonSchemaOverrides, jsonValue } from "../models/common.js";

export type JsonSchema = Record<string, unknown>;

const COMPONENT_REF = "#/components/schemas/";

/**
 * Turns zod schemas into the JSON Schema (2020-12, OpenAPI 3.1's dialect) of one export.
 * Registered models become `#/components/schemas/<id>`, collected as they are met, so a
 * per-key export carries only the components its operations use.
 */
export class SchemaCollector {
  readonly components: Record<string, JsonSchema> = {};

  /** Requests are described in their input form (defaults optional), responses in their output. */
  convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
    const { root, definitions } = converted(schema, io);
    for (const [id, published] of Object.entries(definitions)) {
      const known = this.components[id];
      if (known && known !== published && JSON.stringify(known) !== JSON.stringify(published)) {
        throw new Error(`component ${id} differs between its ${io} and another use: inline one`);
      }
      this.components[id] = published;
    }
    return root;
  }
}

interface Converted {
  root: JsonSchema;
  definitions: Record<string, JsonSchema>;
}

/**
 * Each schema is converted once per direction and the result shared (read-only) by every
 * export: the route table does not change while the sandbox runs, and converting it all is the
 * bulk of an export's cost.
 */
const conversions = {
  input: new WeakMap<z.ZodType, Converted>(),
  output: new WeakMap<z.ZodType, Converted>(),
};

function converted(schema: z.ZodType, io: "input" | "output"): Converted {
  const known = conversions[io].get(schema);
  if (known) return known;
  const {
    $schema: _,
    $defs,
    ...root
  } = z.toJSONSchema(schema, {
    io,
    metadata: components,
    target: "draft-2020-12",
    unrepresentable: ({ zodSchema }) => (zodSchema === jsonValue ? {} : "throw"),
    override: ({ zodSchema, jsonSchema }) => tidy(zodSchema, jsonSchema),
  }) as JsonSchema;
  const definitions: Record<string, JsonSchema> = {};
  for (const [id, definition] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
    // zod names the definitions it had to make itself (cycles) `__schemaN`: none may reach
    // the export, whose refs resolve against the document, not the schema.
    if (id.startsWith("__")) throw new Error(`a recursive schema reached the export (${id})`);
    definitions[id] = rewriteRefs(definition) as JsonSchema;
  }
  const result = { root: rewriteRefs(root) as JsonSchema, definitions };
  conversions[io].set(schema, result);
  return result;
}

/**
 * Publishes the wire form where it differs from the parsed one (query integers), and drops
 * what only repeats another keyword: zod's regexes next to a `format`, and the safe-integer
 * bounds it adds to every integer.
 */
function tidy(zodSchema: unknown, json: JsonSchema): void {
  const override = jsonSchemaOverrides.get(zodSchema as z.ZodType);
  if (override) {
    for (const key of Object.keys(json)) delete json[key];
    Object.assign(json, override);
    return;
  }
  if (typeof json.format === "string" && json.pattern !== undefined) delete json.pattern;
  if (json.type === "integer") {
    if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
    if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
  }
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) =>
      key === "$ref" && typeof inner === "string" && inner.startsWith("#/$defs/")
        ? [key, `${COMPONENT_REF}${inner.slice("#/$defs/".length)}`]
        : [key, rewriteRefs(inner)],
    ),
  );
}
