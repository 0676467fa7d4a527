import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CATALOGUE, type OperationId } from "../../src/api/catalogue.js";

/**
 * The catalogue's hand-made schemas against the full-key contract export: the same method,
 * path, scope and kind, the same parameter and body field names, the same required fields,
 * enums and bounds, for every curated operation. Two differences are deliberate (see
 * `tolerated`): the earlier entries follow the spec's text, which shows no upper bound on
 * offset, and the catalogue refuses an empty string where the export says nothing.
 */
const contract = JSON.parse(
  readFileSync(new URL("../snapshots/contract-full.json", import.meta.url), "utf8"),
);

type Schema = Record<string, any>;

function exported(id: string): { method: string; path: string; op: Schema } {
  for (const [path, item] of Object.entries(contract.paths as Record<string, Schema>))
    for (const [method, op] of Object.entries(item))
      if (op?.operationId === id) return { method: method.toUpperCase(), path, op };
  throw new Error(`${id} is not in the export`);
}

const BOUNDS = ["minimum", "maximum", "minLength", "maxLength", "enum", "format", "const"];

/** What the two sides must agree on for one field: type, bounds, enum, format. */
function essentials(schema: Schema | undefined): Schema {
  if (!schema) return {};
  const out: Schema = {};
  if (schema.type) out.type = schema.type;
  for (const key of BOUNDS) if (schema[key] !== undefined) out[key] = schema[key];
  // zod writes a UUID as a pattern; the export names the format.
  if (schema.pattern?.startsWith("^[0-9a-fA-F]{8}-")) out.format = "uuid";
  if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
  return out;
}

/** The deliberate differences, removed from both sides before they are compared. */
function tolerated(name: string, ours: Schema, theirs: Schema): [Schema, Schema] {
  const a = { ...ours };
  const b = { ...theirs };
  // The spec shows offset with a minimum only; the sandbox's cap is left to the API to enforce.
  if (name === "offset" && a.maximum === undefined) delete b.maximum;
  // An empty filter or id would match nothing or everything: refused here, whatever the export.
  if (a.minLength === 1 && b.minLength === undefined) delete a.minLength;
  return [a, b];
}

function fields(schema: Schema | undefined): { names: string[]; required: string[] } {
  return {
    names: Object.keys(schema?.properties ?? {}).sort(),
    required: [...(schema?.required ?? [])].sort(),
  };
}

const json = (schema: z.ZodType | null) =>
  schema ? (z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Schema) : undefined;

describe.each(Object.keys(CATALOGUE) as OperationId[])("the catalogue's %s", (id) => {
  const ours = CATALOGUE[id] as (typeof CATALOGUE)[OperationId];
  const { method, path, op } = exported(id);

  it("has the export's method, path, scope and kind", () => {
    expect({ method: ours.method, path: ours.path, scope: ours.scope }).toEqual({
      method,
      path,
      scope: op["x-scope"],
    });
    expect(ours.kind).toBe(op["x-idempotency"] === "required" ? "write" : "read");
  });

  it("takes the export's parameters, with their bounds", () => {
    const parameters = (op.parameters as Schema[]).filter((p) => !p.$ref);
    for (const where of ["path", "query"] as const) {
      const theirs = parameters.filter((p) => p.in === where);
      const schema = json(where === "path" ? ours.params : ours.query);
      expect(fields(schema)).toEqual({
        names: theirs.map((p) => p.name).sort(),
        required: theirs
          .filter((p) => p.required)
          .map((p) => p.name)
          .sort(),
      });
      for (const p of theirs) {
        const [a, b] = tolerated(
          p.name,
          essentials(schema?.properties?.[p.name]),
          essentials(p.schema),
        );
        expect(a, `${where} ${p.name}`).toEqual(b);
      }
    }
  });

  it("sends the export's body, with its bounds", () => {
    const theirs = op.requestBody?.content?.["application/json"]?.schema as Schema | undefined;
    const schema = json(ours.body);
    if (!theirs) return expect(schema).toBeUndefined();
    // A body the export does not require may be left out.
    expect(ours.body?.safeParse(undefined).success).toBe(op.requestBody.required !== true);
    expect(fields(schema)).toEqual(fields(theirs));
    for (const name of Object.keys(theirs.properties ?? {})) {
      const [a, b] = tolerated(
        name,
        essentials(schema?.properties?.[name]),
        essentials(theirs.properties[name]),
      );
      expect(a, `body ${name}`).toEqual(b);
    }
  });
});
