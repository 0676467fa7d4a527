import { transformJSONSchema } from "@anthropic-ai/sdk/lib/transform-json-schema";
import { loadMcpTools } from "@langchain/mcp-adapters";
import { mcpToFunctionTool } from "@openai/agents-core";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { toStrictJsonSchema } from "openai/lib/transform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODEL_VISIBLE_TARGET, modelVisibleBytes } from "../../bench/lib/model-visible.mjs";
import { INVENTORY } from "../../src/inventory/index.js";
import { budget, MEASURED, report } from "../helpers/budgets.js";
import { connectInMemory } from "../helpers/mcp.js";

/**
 * Every listed input schema, as served with the full demo contract, checked against the rules
 * of the model providers that VS Code, Cursor and agent frameworks put in front of it:
 *
 * - OpenAI strict function calling, after the conversion the OpenAI Agents SDK applies to MCP
 *   tools (its own `mcpToFunctionTool` with `convertSchemasToStrict`), which must keep the tool
 *   strict rather than fall back; the converted schema must then be a fixed point of OpenAI's
 *   own strict normaliser (openai's `toStrictJsonSchema`) and follow the documented limits.
 * - Gemini function declarations: `parameters` is the OpenAPI 3.0 subset of Schema objects.
 * - LangChain's MCP adapter (`loadMcpTools`, the real one): no type or enum may be lost.
 * - Anthropic: tool names and the SDK's strict transformation (`transformJSONSchema`).
 */
let sandbox: Sandbox;
let tools: Array<{ name: string; description?: string; inputSchema: Record<string, unknown> }>;
let client: Awaited<ReturnType<typeof connectInMemory>>["client"];

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  ({ client } = await connectInMemory(sandbox, { contract: true, writes: {} }));
  tools = (await client.listTools()).tools as typeof tools;
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Every subschema with its path, depth first. */
function* walk(schema: unknown, path = "$", depth = 0): Generator<[Schema, string, number]> {
  if (!isObject(schema)) return;
  yield [schema, path, depth];
  for (const [name, sub] of Object.entries((schema.properties as Schema | undefined) ?? {}))
    yield* walk(sub, `${path}.${name}`, depth + 1);
  if (isObject(schema.items)) yield* walk(schema.items, `${path}[]`, depth + 1);
  for (const key of ["anyOf", "oneOf", "allOf"] as const)
    for (const [i, sub] of ((schema[key] as unknown[] | undefined) ?? []).entries())
      yield* walk(sub, `${path}.${key}[${i}]`, depth);
  if (isObject(schema.additionalProperties))
    yield* walk(schema.additionalProperties, `${path}{}`, depth + 1);
}

/** OpenAI's documented limits and keywords of strict mode (Structured Outputs, function calling). */
const OPENAI_UNSUPPORTED = [
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "oneOf",
  "patternProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "minContains",
  "maxContains",
  "uniqueItems",
  "dependentRequired",
  "dependentSchemas",
  "prefixItems",
];
const OPENAI_FORMATS = [
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
];

function openAiProblems(schema: Schema): string[] {
  const problems: string[] = [];
  if (schema.type !== "object" || "anyOf" in schema) problems.push("$: the root must be an object");
  let properties = 0;
  let enumValues = 0;
  for (const [node, path, depth] of walk(schema)) {
    if (depth > 10) problems.push(`${path}: nested more than 10 levels`);
    for (const keyword of OPENAI_UNSUPPORTED)
      if (keyword in node) problems.push(`${path}: ${keyword} is not supported`);
    if (Array.isArray(node.enum)) enumValues += node.enum.length;
    if (typeof node.format === "string" && !OPENAI_FORMATS.includes(node.format))
      problems.push(`${path}: format ${node.format} is not supported`);
    if (node.type === "object" || isObject(node.properties)) {
      const names = Object.keys((node.properties as Schema | undefined) ?? {});
      properties += names.length;
      if (node.additionalProperties !== false)
        problems.push(`${path}: additionalProperties must be false`);
      const required = new Set((node.required as string[] | undefined) ?? []);
      for (const name of names)
        if (!required.has(name)) problems.push(`${path}.${name}: every property must be required`);
    }
  }
  if (properties > 5000) problems.push(`more than 5000 properties (${properties})`);
  if (enumValues > 1000) problems.push(`more than 1000 enum values (${enumValues})`);
  return problems;
}

/**
 * Gemini's FunctionDeclaration.parameters: a Schema object of the OpenAPI 3.0 subset. Fields it
 * has: type (one of its types), format, title, description, nullable, enum (strings, on a
 * string), maxItems, minItems, properties, required, minProperties, maxProperties, minLength,
 * maxLength, pattern, example, anyOf, propertyOrdering, default, items, minimum, maximum. An
 * OBJECT must have properties ("should be non-empty for OBJECT type"), an ARRAY its items.
 */
const GEMINI_FIELDS = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum",
]);
const GEMINI_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object"]);

function geminiProblems(schema: Schema): string[] {
  const problems: string[] = [];
  for (const [node, path] of walk(schema)) {
    for (const key of Object.keys(node))
      if (!GEMINI_FIELDS.has(key)) problems.push(`${path}: ${key} is not a Schema field`);
    if ("anyOf" in node) continue;
    if (typeof node.type !== "string" || !GEMINI_TYPES.has(node.type))
      problems.push(`${path}: type ${JSON.stringify(node.type)} is not one type of the subset`);
    if (
      "enum" in node &&
      (node.type !== "string" || !(node.enum as unknown[]).every((v) => typeof v === "string"))
    )
      problems.push(`${path}: enum only on strings`);
    if (node.type === "object") {
      const names = Object.keys((node.properties as Schema | undefined) ?? {});
      if (names.length === 0) problems.push(`${path}: an OBJECT needs properties`);
      for (const name of (node.required as string[] | undefined) ?? [])
        if (!names.includes(name)) problems.push(`${path}: required ${name} is not a property`);
    }
    if (node.type === "array" && !isObject(node.items))
      problems.push(`${path}: an ARRAY needs items`);
  }
  return problems;
}

/** What a model may send for each field: its type and its enum, by path. */
function typed(schema: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [node, path] of walk(schema)) {
    if ("anyOf" in node) out[path] = "anyOf";
    else
      out[path] =
        `${String(node.type)}${Array.isArray(node.enum) ? ` ${node.enum.join("|")}` : ""}`;
  }
  return out;
}

describe("input schemas every model accepts", () => {
  it("lists the whole surface with the full contract", () => {
    // Every tool of the inventory but the card's buttons, which only an Apps client is offered.
    expect(tools.map((t) => t.name).sort()).toEqual(
      INVENTORY.tools
        .filter((t) => t.settles !== "app")
        .map((t) => t.name)
        .sort(),
    );
  });

  it("OpenAI: the Agents SDK keeps every tool strict, and the result is OpenAI's strict form", () => {
    const failed: string[] = [];
    for (const tool of tools) {
      const converted = mcpToFunctionTool(
        { ...tool, description: tool.description ?? "" } as never,
        { name: "portfolio" } as never,
        true,
      ) as unknown as { strict: boolean; parameters: Schema };
      if (!converted.strict) {
        failed.push(`${tool.name}: fell back to non-strict`);
        continue;
      }
      expect(toStrictJsonSchema(converted.parameters as never), tool.name).toEqual(
        converted.parameters,
      );
      failed.push(...openAiProblems(converted.parameters).map((p) => `${tool.name} ${p}`));
    }
    expect(failed).toEqual([]);
  });

  it("Gemini: every parameters object is a Schema of the OpenAPI 3.0 subset", () => {
    const failed = tools.flatMap((t) => geminiProblems(t.inputSchema).map((p) => `${t.name} ${p}`));
    expect(failed).toEqual([]);
  });

  it("LangChain's MCP adapter loses no type and no enum", async () => {
    const loaded = await loadMcpTools("portfolio", client as never, { throwOnLoadError: true });
    expect(loaded.map((t) => t.name).sort()).toEqual(tools.map((t) => t.name).sort());
    for (const tool of tools) {
      const adapted = loaded.find((t) => t.name === tool.name)!;
      expect(typed(adapted.schema), tool.name).toEqual(typed(tool.inputSchema));
      expect(Object.values(typed(tool.inputSchema)), tool.name).not.toContain("undefined");
    }
  });

  it("Anthropic: names fit, and the SDK's strict transformation takes every schema", () => {
    for (const tool of tools) {
      expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(tool.inputSchema.type).toBe("object");
      const strict = transformJSONSchema(tool.inputSchema as never) as Schema;
      expect(Object.keys(strict.properties as Schema), tool.name).toEqual(
        Object.keys(tool.inputSchema.properties as Schema),
      );
    }
  });

  it("optional inputs are plain optional properties, never anyOf with null", () => {
    const nullable = tools.flatMap((t) =>
      [...walk(t.inputSchema)]
        .filter(([node]) => JSON.stringify(node.anyOf ?? []).includes('"null"'))
        .map(([, path]) => `${t.name} ${path}`),
    );
    expect(nullable).toEqual([]);
  });
});

describe("what the listing costs a model", () => {
  it("stays within its budget with the full contract, and prints where it stands", () => {
    // npm run bench prints the same measure against MODEL_VISIBLE_TARGET.
    const bytes = modelVisibleBytes(tools);
    const line = report("model-visible", bytes, MEASURED.modelVisibleBytes);
    process.stdout.write(`model-visible target: ${MODEL_VISIBLE_TARGET.toLocaleString("en")}\n`);
    expect(bytes, line).toBeLessThanOrEqual(budget(MEASURED.modelVisibleBytes));
  });
});
