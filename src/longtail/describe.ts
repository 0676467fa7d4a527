import type { Operation } from "../api/catalogue.js";
import type { ContractParameter, JsonSchema } from "../api/contract/types.js";
import { fileFields } from "../api/contract/validators.js";
import type { SearchableOperation } from "./search.js";

/** What the ranker reads of an operation. */
export function searchableOf(op: Operation): SearchableOperation {
  const contract = op.contract;
  const body = contract?.body ? Object.keys(properties(contract.body.schema)) : [];
  return {
    id: op.id,
    family: op.family,
    kind: op.kind,
    summary: op.summary,
    description: contract?.description ?? "",
    parameters: [
      ...(contract?.pathParameters ?? []).map((p) => p.name),
      ...(contract?.queryParameters ?? []).map((p) => p.name),
      ...body,
    ],
  };
}

/**
 * An operation's input in a few lines, enough to call it without another lookup: each field
 * with its type and limits, `*` when required. Far shorter than the JSON Schema, which the
 * model would pay for on every search.
 */
export interface InputSignature {
  path?: string;
  query?: string;
  body?: string;
}

export function signatureOf(op: Operation): InputSignature {
  const contract = op.contract;
  if (!contract) return {};
  const params = (list: readonly ContractParameter[]) =>
    list.length === 0
      ? undefined
      : list.map((p) => `${p.name}${p.required ? "*" : ""} ${typeOf(p.schema, 1)}`).join("; ");
  const signature: InputSignature = {};
  const path = params(contract.pathParameters);
  const query = params(contract.queryParameters);
  if (path) signature.path = path;
  if (query) signature.query = query;
  if (contract.body) {
    const schema = contract.body.schema;
    const files = new Set(contract.body.type === "multipart" ? fileFields(schema) : []);
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const fields = Object.entries(properties(schema)).map(([name, field]) =>
      name === REQUEST_ID && required.has(name)
        ? `${name} ${typeOf(field, 1)} (left out: made by the server)`
        : `${name}${required.has(name) ? "*" : ""} ${files.has(name) ? "file {filename*, content_type, content_base64 | text}" : typeOf(field, 1)}`,
    );
    signature.body =
      fields.length > 0 ? fields.join("; ") : typeOf(schema, 1) || "object (free form)";
  }
  return signature;
}

/**
 * The durable identity of a creation (the calendar's manual events, spec part 2): when the model
 * gives none, draft_api_write makes one, stored with the intent so every retry repeats it.
 */
export const REQUEST_ID = "client_request_id";

const properties = (schema: JsonSchema) => (schema.properties ?? {}) as Record<string, JsonSchema>;

/** `uuid`, `date`, `open|acknowledged`, `integer 1-200`, `string ≤2000`, `[uuid] ≤50`, `{a, b}`. */
export function typeOf(schema: JsonSchema, depth: number): string {
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) {
    const shown = variants.filter((v) => v.type !== "null").map((v) => typeOf(v, depth));
    const nullable = variants.some((v) => v.type === "null");
    return `${[...new Set(shown)].join("|")}${nullable ? "|null" : ""}`;
  }
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.map(String);
    return values.length <= 10 ? values.join("|") : `${values.slice(0, 10).join("|")}|…`;
  }
  const type = Array.isArray(schema.type) ? schema.type.join("|") : (schema.type as string);
  switch (type) {
    case "string": {
      if (typeof schema.format === "string") return schema.format;
      return `string${range(schema.minLength, schema.maxLength)}`;
    }
    case "integer":
    case "number":
      return `${type}${range(schema.minimum, schema.maximum)}`;
    case "boolean":
      return "boolean";
    case "array": {
      const items = (schema.items ?? {}) as JsonSchema;
      const max = typeof schema.maxItems === "number" ? ` ≤${schema.maxItems}` : "";
      return `[${typeOf(items, depth)}]${max}`;
    }
    case "object": {
      const fields = Object.keys(properties(schema));
      if (fields.length === 0) return "object";
      if (depth <= 0) return `{${fields.join(", ")}}`;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      return `{${Object.entries(properties(schema))
        .map(
          ([name, field]) => `${name}${required.has(name) ? "*" : ""} ${typeOf(field, depth - 1)}`,
        )
        .join(", ")}}`;
    }
    default:
      return "any";
  }
}

function range(min: unknown, max: unknown): string {
  const lo = typeof min === "number" ? min : null;
  const hi = typeof max === "number" ? max : null;
  if (lo !== null && hi !== null) return ` ${lo}-${hi}`;
  if (hi !== null) return ` ≤${hi}`;
  if (lo !== null && lo > 0) return ` ≥${lo}`;
  return "";
}
