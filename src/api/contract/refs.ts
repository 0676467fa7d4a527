import type { JsonSchema } from "./types.js";

/**
 * Local `$ref`s of one document (`#/components/...`). Schemas are inlined so that each
 * operation's validators and the model's view of it stand alone; a schema that refers to itself
 * is cut at the repeat (any value there), since what the server validates is the operation's
 * own fields, and the API checks the rest.
 */
export class RefResolver {
  constructor(private readonly document: Record<string, unknown>) {}

  /** The object a `$ref` points to (following chains), or the value itself. */
  deref(value: unknown, seen = new Set<string>()): unknown {
    if (!isRef(value)) return value;
    const ref = value.$ref;
    if (seen.has(ref)) return {};
    seen.add(ref);
    return this.deref(this.target(ref), seen);
  }

  /** A copy of a schema with every local `$ref` replaced by what it names. */
  inline(schema: JsonSchema, expanding: ReadonlySet<string> = new Set()): JsonSchema {
    return this.copy(schema, expanding) as JsonSchema;
  }

  private copy(value: unknown, expanding: ReadonlySet<string>): unknown {
    if (Array.isArray(value)) return value.map((v) => this.copy(v, expanding));
    if (typeof value !== "object" || value === null) return value;
    if (isRef(value)) {
      const ref = value.$ref;
      if (expanding.has(ref)) return {};
      const { $ref: _, ...siblings } = value as Record<string, unknown>;
      const target = this.copy(this.target(ref), new Set([...expanding, ref]));
      return Object.keys(siblings).length === 0
        ? target
        : { ...(target as object), ...(this.copy(siblings, expanding) as object) };
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.copy(v, expanding)]));
  }

  private target(ref: string): unknown {
    if (!ref.startsWith("#/")) throw new Error(`only local references are supported, not ${ref}`);
    let node: unknown = this.document;
    for (const raw of ref.slice(2).split("/")) {
      const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      node =
        typeof node === "object" && node !== null
          ? (node as Record<string, unknown>)[key]
          : undefined;
      if (node === undefined) throw new Error(`${ref} names nothing in the document`);
    }
    return node;
  }
}

function isRef(value: unknown): value is { $ref: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { $ref?: unknown }).$ref === "string"
  );
}
