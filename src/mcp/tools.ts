import type {
  CallToolResult,
  InputRequiredResult,
  ListToolsResult,
  Server,
  ServerContext,
} from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { closest } from "../closest.js";
import { invalidArguments, userMessage } from "../errors.js";
import { describeIssue, type FieldError } from "../field-errors.js";
import { type Selection, whyNotOffered } from "../inventory/index.js";
import type { ToolContext, ToolDefinition } from "../inventory/types.js";
import { tooDeep } from "../json-depth.js";
import type { Logger } from "../log.js";
import { type ConfirmationDeps, supervise } from "./confirm.js";
import { logFailure } from "./failures.js";
import { familyIcons } from "./icons.js";
import { listedSchema } from "./schema.js";

type ListedTool = ListToolsResult["tools"][number];

const listed = new WeakMap<ToolDefinition, ListedTool>();
const listings = new WeakMap<Selection, ListToolsResult>();

/**
 * The `tools/list` answer, computed once per selection and shared by every session and request
 * (each tool's entry once for all selections): JSON Schema generation is the costliest thing a
 * listing does, and it never changes.
 */
export function toolListing(selection: Selection): ListToolsResult {
  let listing = listings.get(selection);
  if (!listing) {
    listing = { tools: selection.tools.map(listedTool) };
    listings.set(selection, listing);
  }
  return listing;
}

function listedTool(tool: ToolDefinition): ListedTool {
  let entry = listed.get(tool);
  if (!entry) {
    entry = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: listedSchema(tool.input, "input") as ListedTool["inputSchema"],
      outputSchema: listedSchema(tool.output, "output") as ListedTool["outputSchema"],
      annotations: { ...tool.annotations },
      icons: familyIcons(tool.family),
    };
    listed.set(tool, entry);
  }
  return entry;
}

/**
 * Serves `tools/list` and `tools/call`. Arguments are validated here so that a refusal names
 * each field and rule; failures become results with `isError: true` and one sentence, never a
 * stack. Draft tools go through the confirmation protocol.
 */
export function installTools(
  server: Server,
  selection: Selection,
  contextFor: (ctx: ServerContext) => ToolContext,
  confirmation: ConfirmationDeps | null,
  logger: Logger,
): void {
  const byName = new Map(selection.tools.map((t) => [t.name, t]));
  server.setRequestHandler("tools/list", () => toolListing(selection));
  server.setRequestHandler(
    "tools/call",
    async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
      const tool = byName.get(request.params.name);
      if (!tool) {
        const hidden = whyNotOffered(request.params.name, selection);
        if (hidden)
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `Tool ${request.params.name} is not offered here: ${hidden}.`,
          );
        const near = closest(request.params.name, byName.keys());
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
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
      const context = contextFor(ctx);
      try {
        if (tool.kind === "draft") {
          return await supervise(tool, parsed.data, context, ctx, server, confirmation);
        }
        return toResult(await tool.run(parsed.data, context));
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        logFailure(logger, error, { tool: tool.name });
        return errorResult(userMessage(error, tool.name));
      }
    },
  );
}

export function toResult(
  output: Awaited<ReturnType<Extract<ToolDefinition, { kind: "run" }>["run"]>>,
): CallToolResult {
  const text = output.text ?? JSON.stringify(output.structured);
  return {
    content: [...((output.blocks ?? []) as CallToolResult["content"]), { type: "text", text }],
    structuredContent: output.structured as Record<string, unknown>,
  };
}

/** "colour is not a known field; did you mean color?" */
function withSuggestion(error: FieldError, known: readonly string[]): FieldError {
  if (error.rule !== "unknown field" || error.field.includes(".")) return error;
  const near = closest(error.field, known);
  return near ? { ...error, message: `${error.message}; did you mean ${near}?` } : error;
}

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
