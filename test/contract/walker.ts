import type { OpenApiDocument } from "@portfolio-mcp/sandbox";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formats from "ajv-formats";

/**
 * What the contract test needs to walk an export without a hand-kept list: its operations in
 * a deterministic order, a JSON Schema validator over the document, and a small generator of
 * values for the required fields of a request schema.
 */

export interface WalkedOperation {
  id: string;
  method: string;
  /** The path template, relative to /v1. */
  path: string;
  op: Record<string, any>;
  kind: "exchange" | "read" | "write";
  delegated: boolean;
}

/** Reads first, then writes, deletions last: a deletion never removes what a read still needs. */
export function operationsInWalkOrder(doc: OpenApiDocument): WalkedOperation[] {
  const all = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      id: op.operationId,
      method: method.toUpperCase(),
      path,
      op: op as Record<string, any>,
      kind: ((op.security as unknown[]).length === 0
        ? "exchange"
        : op["x-idempotency"] === "required"
          ? "write"
          : "read") as WalkedOperation["kind"],
      delegated: op["x-delegation"] !== undefined,
    })),
  );
  const rank = (o: WalkedOperation) =>
    o.kind === "exchange" ? 0 : o.kind === "read" ? 1 : o.method === "DELETE" ? 3 : 2;
  return all
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i)
    .map(({ o }) => o);
}

/** The single 2xx an operation declares, and how its body is described. */
export function successOf(op: Record<string, any>): {
  status: number;
  mediaType: string | null;
  /** Every content type the answer may have: a file can be one of several types. */
  mediaTypes: string[];
  pointer: string[] | null;
} {
  const [status, response] = Object.entries(op.responses as Record<string, any>).find(([s]) =>
    s.startsWith("2"),
  ) as [string, any];
  const mediaTypes = response.content ? Object.keys(response.content) : [];
  const mediaType = mediaTypes[0] ?? null;
  return {
    status: Number(status),
    mediaType,
    mediaTypes,
    pointer: mediaType ? ["responses", status, "content", mediaType, "schema"] : null,
  };
}

/** Validates values against schemas found by JSON pointer inside the export. */
export class ContractValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDocument) {
    // ajv-formats is CommonJS: its plugin is the default export's default.
    formats.default(this.ajv);
    this.ajv.addSchema(doc as object, "contract");
  }

  /** Null when valid, else the errors in a line. */
  check(pointer: string[], value: unknown): string | null {
    const ref = `contract#/${pointer.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/")}`;
    let validate = this.cache.get(ref);
    if (!validate) {
      validate = this.ajv.getSchema(ref);
      if (!validate) return `no schema at ${ref}`;
      this.cache.set(ref, validate);
    }
    if (validate(value)) return null;
    return this.ajv.errorsText(validate.errors, { separator: "; " });
  }

  /** A schema with its `$ref`s to components followed, for the generator. */
  resolve(schema: Record<string, any>): Record<string, any> {
    let current = schema;
    while (typeof current.$ref === "string") {
      const path = (current.$ref as string).replace(/^#\//, "").split("/");
      current = path.reduce(
        (node: any, part) => node[part.replaceAll("~1", "/").replaceAll("~0", "~")],
        this.doc,
      );
    }
    return current;
  }
}

/**
 * A value for a schema, from its required parts only: enough for a request the schema accepts.
 * Patterns and ids of existing records cannot be guessed; routes declare an example for those.
 */
export function generate(
  schema: Record<string, any>,
  validator: ContractValidator,
  today: string,
): unknown {
  const s = validator.resolve(schema);
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (Array.isArray(s.anyOf)) {
    const branch = s.anyOf.find((b: any) => b.type !== "null") ?? s.anyOf[0];
    return generate(branch, validator, today);
  }
  switch (s.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const name of (s.required as string[] | undefined) ?? [])
        out[name] = generate(s.properties?.[name] ?? {}, validator, today);
      return out;
    }
    case "array":
      return Array.from({ length: s.minItems ?? 0 }, () =>
        generate(s.items ?? {}, validator, today),
      );
    case "integer":
    case "number":
      return Math.min(s.minimum ?? 1, s.maximum ?? Number.MAX_SAFE_INTEGER);
    case "boolean":
      return false;
    case "string": {
      if (s.format === "date") return today;
      if (s.format === "date-time") return new Date().toISOString();
      if (s.format === "email") return "contract@example.com";
      const text = "Exemple du contrat".padEnd(s.minLength ?? 0, "x");
      return text.slice(0, s.maxLength ?? text.length);
    }
    default:
      return {};
  }
}
