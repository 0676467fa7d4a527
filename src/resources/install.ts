import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import { ApiError } from "../api/errors.js";
import { asListPage } from "../api/response.js";
import { describeIssue } from "../field-errors.js";
import type { Logger } from "../log.js";
import { INTERNAL_ERROR, INVALID_PARAMS, ProtocolError } from "../protocol-error.js";
import { invalidArguments, userMessage } from "../tools/errors.js";
import type { ToolContext, ToolDefinition } from "../tools/types.js";
import { isTemplate, RESOURCES, type ResourceSpec } from "./catalogue.js";

type RequestExtra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1];

/** MCP's "resource not found" (specification, server/resources, error handling). */
export const RESOURCE_NOT_FOUND = -32002;
const NUMERIC = new Set(["limit", "offset"]);
const FIRST_OPERATIONS = 50;

/**
 * Serves the `portfolio://` resources on a low-level Server. Each resource reads through the
 * tool that answers the same question, so both give the same content and the same errors.
 */
export function installResources(
  server: Server,
  tools: readonly ToolDefinition[],
  contextFor: (extra: RequestExtra) => ToolContext,
  logger: Logger,
): void {
  const toolByName = new Map(tools.map((t) => [t.name, t]));
  server.registerCapabilities({ resources: { listChanged: false } });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCES.filter(isTemplate).map((r) => ({
      uriTemplate: r.uri,
      name: r.name,
      title: r.title,
      description: r.description,
      mimeType: r.mimeType,
    })),
  }));

  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => {
    const fixed: Resource[] = RESOURCES.filter((r) => !isTemplate(r)).map((r) => ({
      uri: r.uri,
      name: r.name,
      title: r.title,
      description: r.description,
      mimeType: r.mimeType,
    }));
    return { resources: [...fixed, ...(await firstOperations(contextFor(extra), logger))] };
  });

  server.setRequestHandler(
    ReadResourceRequestSchema,
    async (request, extra): Promise<ReadResourceResult> => {
      const uri = request.params.uri;
      const found = matchResource(uri);
      if (!found)
        throw new ProtocolError(
          RESOURCE_NOT_FOUND,
          `No resource ${uri}; see resources/templates/list.`,
          {
            uri,
          },
        );
      const tool = toolByName.get(found.spec.tool);
      if (!tool)
        throw new ProtocolError(INTERNAL_ERROR, `Resource ${found.spec.name} has no tool.`);
      const parsed = tool.input.safeParse(toArguments(found.variables));
      if (!parsed.success) {
        throw new ProtocolError(
          INVALID_PARAMS,
          invalidArguments(
            `The resource ${uri}`,
            parsed.error.issues.map((i) => describeIssue(i)),
            "read",
          ),
        );
      }
      try {
        const output = await tool.run(parsed.data, contextFor(extra));
        const blob = output.blocks?.find((b) => b.type === "resource")?.resource as
          | { blob?: string }
          | undefined;
        return {
          contents: [
            blob?.blob
              ? { uri, mimeType: found.spec.mimeType, blob: blob.blob }
              : { uri, mimeType: found.spec.mimeType, text: JSON.stringify(output.structured) },
          ],
        };
      } catch (error) {
        logger.warn({ resource: found.spec.name, err: error }, "resource read failed");
        const code =
          error instanceof ApiError && error.code === "not_found"
            ? RESOURCE_NOT_FOUND
            : error instanceof ApiError &&
                (error.code === "invalid_input" || error.code === "invalid_request")
              ? INVALID_PARAMS
              : INTERNAL_ERROR;
        throw new ProtocolError(code, userMessage(error, uri));
      }
    },
  );
}

export function matchResource(
  uri: string,
): { spec: ResourceSpec; variables: Record<string, string> } | null {
  for (const spec of RESOURCES) {
    const variables = spec.compiled.match(uri);
    if (variables) return { spec, variables };
  }
  return null;
}

function toArguments(variables: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [
      name,
      NUMERIC.has(name) && /^\d+$/.test(value) ? Number(value) : value,
    ]),
  );
}

/** A useful first page: the active operations, each as its own resource. */
async function firstOperations(ctx: ToolContext, logger: Logger): Promise<Resource[]> {
  try {
    const { data } = await ctx.api.call(
      "operations_list",
      { query: { status: "active", limit: FIRST_OPERATIONS } },
      { signal: ctx.signal },
    );
    return (asListPage(data).items as Array<{ id?: unknown; name?: unknown; status?: unknown }>)
      .filter((o) => typeof o.id === "string")
      .map((o) => ({
        uri: `portfolio://operations/${o.id as string}`,
        name: typeof o.name === "string" ? o.name : (o.id as string),
        description: `Operation (${typeof o.status === "string" ? o.status : "unknown status"})`,
        mimeType: "application/json",
      }));
  } catch (error) {
    logger.warn({ err: error }, "could not list operations as resources");
    return [];
  }
}
