import { z } from "zod";
import { isJsonText } from "../toolkit/json-text.js";

const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);
const UUID_PATTERN =
  "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
/** Bounds that only guard the server (an offset of a million): noise to a model. */
const GUARD_BOUND = 1_000_000;

/**
 * JSON Schema for a listing, trimmed of what costs context and tells the model nothing: the
 * dialect (MCP's default), JavaScript's safe-integer bounds, regexes behind a named format, and,
 * in outputs, the strictness keywords (every field is always present; clients validate against
 * types). Nullable types are written `anyOf` with `null`, which every client reads (a type array
 * is not portable). Validation itself uses the zod schemas, untrimmed.
 *
 * Input schemas are written in the subset every model provider accepts as served (OpenAI's
 * strict function calling after the Agents SDK's conversion, Gemini's `parameters`, LangChain's
 * MCP adapter; test/mcp/providers.test.ts): no `additionalProperties` (the server refuses an
 * unknown field by name anyway), an optional input as its plain type (a `null` received for it
 * means absent: normaliseArguments), no string lengths nor lower bounds of 0 or 1 (the refusal
 * names the rule; the model pays for every keyword), no free-form object (those are JSON text:
 * toolkit/json-text.ts).
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
    if (io === "input" && inputNoise(key, value)) continue;
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
    if (key === "properties") {
      const required = new Set((source.required as string[] | undefined) ?? []);
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([n, v]) => [
          n,
          compact(io === "input" && !required.has(n) ? withoutNull(v) : v, io),
        ]),
      );
      continue;
    }
    out[key] = compact(value, io);
  }
  return out;
}

/** Keywords an input schema leaves out (see listedSchema). */
function inputNoise(key: string, value: unknown): boolean {
  if (key === "additionalProperties" || key === "minLength" || key === "maxLength") return true;
  // A count from 0 or 1 goes without saying; an offset of a million only guards the server.
  if (key === "minimum") return value === 0 || value === 1;
  return key === "maximum" && typeof value === "number" && value >= GUARD_BOUND;
}

/** An optional input's `anyOf [T, null]` as T: absent and null mean the same for it. */
function withoutNull(node: unknown): unknown {
  if (!node || typeof node !== "object") return node;
  const source = node as Record<string, unknown>;
  if (Array.isArray(source.type) && source.type.includes("null")) {
    const types = source.type.filter((t) => t !== "null");
    return { ...source, type: types.length === 1 ? types[0] : types };
  }
  const branches = source.anyOf as unknown[] | undefined;
  if (!Array.isArray(branches)) return node;
  const kept = branches.filter((b) => (b as { type?: unknown })?.type !== "null");
  if (kept.length === branches.length) return node;
  const { anyOf: _anyOf, ...rest } = source;
  return kept.length === 1 ? { ...rest, ...(kept[0] as object) } : { ...rest, anyOf: kept };
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

/**
 * Arguments as the listing promised to take them, before validation: a `null` for an optional
 * input means it was not given (strict converters make every input required and nullable, and
 * models then send null for what they leave out), and a JSON-text input given as the object
 * itself is written back as text. Everything else is left to the schema to judge.
 */
export function normaliseArguments(schema: z.ZodType, value: unknown): unknown {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case "object": {
      if (!isPlainObject(value)) return value;
      const shape = def.shape as Record<string, z.ZodType>;
      const out: Record<string, unknown> = {};
      for (const [key, given] of Object.entries(value)) {
        const field = shape[key];
        if (!field) {
          out[key] = given;
          continue;
        }
        if (given === null && field._zod.optin === "optional") continue;
        out[key] = normaliseArguments(field, given);
      }
      return out;
    }
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
      return normaliseArguments(def.innerType as z.ZodType, value);
    case "array":
      return Array.isArray(value)
        ? value.map((v) => normaliseArguments(def.element as z.ZodType, v))
        : value;
    case "pipe":
      if (isJsonText(schema) && typeof value === "object" && value !== null)
        return JSON.stringify(value);
      return normaliseArguments(def.in as z.ZodType, value);
    default:
      return value;
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
