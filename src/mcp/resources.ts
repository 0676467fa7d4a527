import {
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { describeIssue } from "@portfolio-mcp/field-errors";
import { asListPage } from "../api/response.js";
import {
  APP_CSP,
  APP_MIME_TYPE,
  APP_VIEWS,
  type AppView,
  type AppViewName,
  appHtml,
} from "../apps/catalog.js";
import { invalidArguments } from "../errors.js";
import type { Selection } from "../inventory/index.js";
import type { Logger } from "../log.js";
import { memoised } from "../memo.js";
import { neutraliseDeep } from "../neutralise.js";
import type {
  ResourceDefinition,
  RunTool,
  ToolContext,
  ToolDefinition,
} from "../toolkit/definitions.js";
import { failed, failureKind, logFailure } from "./failures.js";
import { familyIcons } from "./icons.js";
import { toolsByName } from "./tools.js";
import { type CompiledTemplate, compileTemplate } from "./uri-template.js";

const NUMERIC = new Set(["limit", "offset"]);
const FIRST_OPERATIONS = 50;

export const isTemplate = (r: ResourceDefinition) => r.uri.includes("{");

const compiled = new Map<string, CompiledTemplate>();
const templateOf = (r: ResourceDefinition) => {
  let template = compiled.get(r.uri);
  if (!template) {
    template = compileTemplate(r.uri);
    compiled.set(r.uri, template);
  }
  return template;
};

/** The resource a URI names, among those offered, with its variables. */
export function matchResource(
  resources: readonly ResourceDefinition[],
  uri: string,
): { resource: ResourceDefinition; variables: Record<string, string> } | null {
  for (const resource of resources) {
    const variables = templateOf(resource).match(uri);
    if (variables) return { resource, variables };
  }
  return null;
}

/** No views; a constant, as what a selection lists is kept per views array (listedOf). */
const NO_VIEWS: readonly AppViewName[] = [];

/**
 * Serves the `portfolio://` resources offered to this caller. Each reads through the tool that
 * answers the same question, so both give the same content and the same errors.
 */
export function installResources(
  server: Server,
  selection: Selection,
  contextFor: (ctx: ServerContext) => ToolContext,
  logger: Logger,
  views: readonly AppViewName[] = NO_VIEWS,
  appsShown: (ctx: ServerContext) => boolean = () => false,
): void {
  const { toolByName, templates, fixed, appViews, viewResources, listsOperations } = listedOf(
    selection,
    views,
  );

  server.setRequestHandler("resources/templates/list", () => ({ resourceTemplates: templates }));
  server.setRequestHandler("resources/list", async (_request, ctx) => {
    const own = appsShown(ctx) ? [...fixed, ...viewResources] : fixed;
    return {
      resources: listsOperations
        ? [...own, ...(await firstOperations(contextFor(ctx), logger))]
        : own,
    };
  });

  server.setRequestHandler("resources/read", async (request, ctx): Promise<ReadResourceResult> => {
    const uri = request.params.uri;
    const view = appViews.find((v) => v.uri === uri);
    if (view) return viewContents(view);
    const { resource, tool, args } = resolveRead(selection.resources, toolByName, uri);
    const context = contextFor(ctx);
    try {
      const content = resource.read
        ? await resource.read(context)
        : { text: JSON.stringify((await tool.run(args, context)).structured) };
      // Data written by others: nothing in it may hide from whoever reads it.
      return { contents: [{ uri, mimeType: resource.mimeType, ...neutraliseDeep(content) }] };
    } catch (error) {
      return failed("resources/read", error, uri, logger);
    }
  });
}

interface Listed {
  toolByName: ReadonlyMap<string, ToolDefinition>;
  templates: Array<ReturnType<typeof listing> & { uriTemplate: string }>;
  fixed: Resource[];
  appViews: AppView[];
  viewResources: Resource[];
  listsOperations: boolean;
}
const listed = new WeakMap<Selection, Map<readonly AppViewName[], Listed>>();

/**
 * What a selection offers of resources, made once per selection and views (a 2026-era request
 * over HTTP builds its server for itself).
 */
function listedOf(selection: Selection, views: readonly AppViewName[]): Listed {
  return memoised(listed, selection, views, () => {
    const toolByName = toolsByName(selection);
    const appViews = views.map((name) => APP_VIEWS[name]);
    return {
      toolByName,
      templates: selection.resources
        .filter(isTemplate)
        .map((r) => ({ uriTemplate: r.uri, ...listing(r) })),
      fixed: selection.resources
        .filter((r) => !isTemplate(r))
        .map((r) => ({ uri: r.uri, ...listing(r) })),
      appViews,
      // Listed to clients that render MCP Apps; readable by any (a host may fetch one ahead).
      viewResources: appViews.map(viewListing),
      listsOperations: toolByName.has("get_operation") && toolByName.has("list_operations"),
    };
  });
}

/** What resources/list and resources/templates/list say of a resource, its address aside. */
const listing = (r: ResourceDefinition) => ({
  name: r.name,
  title: r.title,
  description: r.description,
  mimeType: r.mimeType,
  icons: familyIcons(r.family),
});

const viewListing = (view: AppView): Resource => ({
  uri: view.uri,
  name: view.name,
  title: view.title,
  description: view.description,
  mimeType: APP_MIME_TYPE,
  _meta: { ui: { csp: APP_CSP } },
});

const viewContents = (view: AppView): ReadResourceResult => ({
  contents: [
    {
      uri: view.uri,
      mimeType: APP_MIME_TYPE,
      text: appHtml(view.name),
      _meta: { ui: { csp: APP_CSP, prefersBorder: true } },
    },
  ],
});

/**
 * The resource a URI names, the tool it reads through and that tool's arguments, or the
 * protocol error saying why there is none.
 */
function resolveRead(
  resources: readonly ResourceDefinition[],
  toolByName: ReadonlyMap<string, ToolDefinition>,
  uri: string,
): { resource: ResourceDefinition; tool: RunTool; args: Record<string, unknown> } {
  const found = matchResource(resources, uri);
  if (!found)
    throw new ResourceNotFoundError(uri, `No resource ${uri}; see resources/templates/list.`);
  const { resource, variables } = found;
  const tool = toolByName.get(resource.tool);
  if (tool?.kind !== "run")
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `Resource ${resource.name} has no tool.`,
    );
  const parsed = tool.input.safeParse(toArguments(variables));
  if (!parsed.success) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      invalidArguments(
        `The resource ${uri}`,
        parsed.error.issues.map((i) => describeIssue(i)),
        "read",
      ),
    );
  }
  return { resource, tool, args: parsed.data };
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
      .map((o) =>
        neutraliseDeep({
          uri: `portfolio://operations/${encodeURIComponent(o.id as string)}`,
          name: typeof o.name === "string" ? o.name : (o.id as string),
          description: `Operation (${typeof o.status === "string" ? o.status : "unknown status"})`,
          mimeType: "application/json",
        }),
      );
  } catch (error) {
    logFailure(logger, error, failureKind(error), { resource: "operations (listing)" });
    return []; // the fixed resources are still worth listing
  }
}
