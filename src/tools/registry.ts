import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ListToolsResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { closest } from "../closest.js";
import { describeIssue, type FieldError } from "../field-errors.js";
import { tooDeep } from "../json-depth.js";
import type { Logger } from "../log.js";
import { INVALID_PARAMS, ProtocolError } from "../protocol-error.js";
import { invalidArguments, userMessage } from "./errors.js";
import type { ToolContext, ToolDefinition } from "./types.js";

type RequestExtra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1];

const listings = new WeakMap<readonly ToolDefinition[], ListToolsResult>();

/**
 * The `tools/list` answer, computed once per tool set and shared by every session: JSON
 * Schema generation is the costliest thing a listing does, and it never changes.
 */
export function toolListing(tools: readonly ToolDefinition[]): ListToolsResult {
  let listing = listings.get(tools);
  if (!listing) {
    listing = {
      tools: tools.map((tool) => ({
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: jsonSchema(
          tool.input,
          "input",
        ) as ListToolsResult["tools"][number]["inputSchema"],
        outputSchema: jsonSchema(
          tool.output,
          "output",
        ) as ListToolsResult["tools"][number]["outputSchema"],
        annotations: { ...tool.annotations },
      })),
    };
    listings.set(tools, listing);
  }
  return listing;
}

const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);
const UUID_PATTERN =
  "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

/**
 * JSON Schema for the listing, trimmed of what costs context and tells the model nothing: the
 * dialect (MCP's default), JavaScript's safe-integer bounds, regexes behind a named format,
 * and, in outputs, the strictness keywords (every field is always present; clients validate
 * against types). Validation itself uses the zod schemas, untrimmed.
 */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return compact(rest, io) as Record<string, unknown>;
}

function compact(node: unknown, io: "input" | "output"): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, io));
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === "minimum" || key === "maximum") && SAFE_INTEGER_BOUNDS.has(value as number))
      continue;
    if (io === "output" && (key === "required" || key === "additionalProperties")) continue;
    if (key === "pattern" && value === UUID_PATTERN) {
      out.format = "uuid";
      continue;
    }
    // A named format says it all; zod also spells date-times out as a long regex.
    if (key === "pattern" && "format" in (node as Record<string, unknown>)) continue;
    // JSON object keys are strings anyway.
    if (key === "propertyNames" && JSON.stringify(value) === '{"type":"string"}') continue;
    out[key] =
      key === "properties" ? mapValues(value as Record<string, unknown>, io) : compact(value, io);
  }
  return out;
}

function mapValues(
  properties: Record<string, unknown>,
  io: "input" | "output",
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(properties).map(([name, value]) => [name, compact(value, io)]),
  );
}

/**
 * Serves `tools/list` and `tools/call` on a low-level Server. Arguments are validated here so
 * that a refusal names each field and rule; failures become results with `isError: true` and
 * one sentence, never a stack.
 */
export function installTools(
  server: Server,
  tools: readonly ToolDefinition[],
  contextFor: (extra: RequestExtra) => ToolContext,
  logger: Logger,
): void {
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.registerCapabilities({ tools: { listChanged: false } });
  server.setRequestHandler(ListToolsRequestSchema, () => toolListing(tools));
  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const tool = byName.get(request.params.name);
      if (!tool) {
        const near = closest(request.params.name, byName.keys());
        throw new ProtocolError(
          INVALID_PARAMS,
          `Unknown tool ${request.params.name}${near ? `; did you mean ${near}?` : "; see tools/list."}`,
        );
      }
      const args = request.params.arguments ?? {};
      // Checked before zod, whose recursive walk would overflow the stack on deep nesting.
      const deep = tooDeep(args);
      if (deep) return errorResult(invalidArguments(tool.name, [deep]));
      const parsed = tool.input.safeParse(args);
      if (!parsed.success) {
        const known = Object.keys(tool.input.shape);
        return errorResult(
          invalidArguments(
            tool.name,
            parsed.error.issues.map((issue) => withSuggestion(describeIssue(issue), known)),
          ),
        );
      }
      try {
        const output = await tool.run(parsed.data, contextFor(extra));
        const text = output.text ?? JSON.stringify(output.structured);
        return {
          content: [
            ...((output.blocks ?? []) as CallToolResult["content"]),
            { type: "text", text },
          ],
          structuredContent: output.structured as Record<string, unknown>,
        };
      } catch (error) {
        logger.warn({ tool: tool.name, err: error }, "tool call failed");
        return errorResult(userMessage(error, tool.name));
      }
    },
  );
}

/** "colour is not a known field; did you mean color?" */
function withSuggestion(error: FieldError, known: readonly string[]): FieldError {
  if (error.rule !== "unknown field" || error.field.includes(".")) return error;
  const near = closest(error.field, known);
  return near ? { ...error, message: `${error.message}; did you mean ${near}?` } : error;
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
