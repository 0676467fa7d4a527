import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { describeIssue } from "../field-errors.js";
import type { Logger } from "../log.js";
import { userMessage } from "./errors.js";
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
        annotations: { title: tool.title, ...tool.annotations },
      })),
    };
    listings.set(tools, listing);
  }
  return listing;
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest; // MCP's default dialect is 2020-12: no need to repeat it in every tool
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
      if (!tool)
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}.`);
      const parsed = tool.input.safeParse(request.params.arguments ?? {});
      if (!parsed.success) {
        const fields = parsed.error.issues
          .map((issue) => {
            const e = describeIssue(issue);
            return `${e.field} ${e.message} (rule: ${e.rule})`;
          })
          .join("; ");
        return errorResult(
          `Invalid arguments for ${tool.name}: ${fields}. Nothing was sent; fix these and call again.`,
        );
      }
      try {
        const output = await tool.run(parsed.data, contextFor(extra));
        const text = JSON.stringify(output.structured);
        return {
          content: [
            ...((output.blocks ?? []) as CallToolResult["content"]),
            { type: "text", text },
          ],
          structuredContent: output.structured as Record<string, unknown>,
        };
      } catch (error) {
        logger.warn({ tool: tool.name, err: error }, "tool call failed");
        return errorResult(userMessage(error));
      }
    },
  );
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
