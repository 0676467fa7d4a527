import type {
  CallToolResult,
  InputRequiredResult,
  ListToolsResult,
  Server,
  ServerContext,
} from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { describeIssue, type FieldError } from "@portfolio-mcp/field-errors";
import { APP_VIEWS, type AppViewName } from "../apps/catalog.js";
import { closest } from "../closest.js";
import { ArgumentsRefused, invalidArguments } from "../errors.js";
import { type Selection, whyNotOffered } from "../inventory/index.js";
import { tooDeep } from "../json-depth.js";
import type { Logger } from "../log.js";
import { memoised, memoisedOn } from "../memo.js";
import { neutralise, neutraliseDeep } from "../neutralise.js";
import type { ToolContext, ToolDefinition } from "../toolkit/definitions.js";
import {
  type ConfirmationDeps,
  cardsAllowed,
  channelFor,
  settlingWay,
  showsApps,
  supervise,
} from "./confirm.js";
import { failed } from "./failures.js";
import { familyIcons } from "./icons.js";
import { listedSchema, normaliseArguments } from "./schema.js";

type ListedTool = ListToolsResult["tools"][number];

/**
 * What a listing depends on besides the selection: which confirmation tools the client is
 * offered (`way`: the card's, or the model's two-step pair), whether it renders MCP Apps (only
 * then do tools name their views), and whether write tools name the confirmation card
 * (PORTFOLIO_CONFIRM allows the app way).
 */
export interface Surface {
  /** null: neither pair (PORTFOLIO_CONFIRM leaves two-step out, and no card is shown). */
  way: "app" | "two-step" | null;
  apps: boolean;
  cards: boolean;
}

const listed = new WeakMap<ToolDefinition, ListedTool>();
const listings = new WeakMap<Selection, Map<string, ListToolsResult>>();

/**
 * The `tools/list` answer, computed once per selection and surface and shared by every session
 * and request (each tool's entry once for all selections): JSON Schema generation is the
 * costliest thing a listing does, and it never changes.
 */
export function toolListing(selection: Selection, surface: Surface): ListToolsResult {
  let bySurface = listings.get(selection);
  if (!bySurface) {
    bySurface = new Map();
    listings.set(selection, bySurface);
  }
  const key = `${surface.way}:${surface.apps}:${surface.cards}`;
  let listing = bySurface.get(key);
  if (!listing) {
    listing = {
      tools: selection.tools
        .filter((t) => t.settles === undefined || t.settles === surface.way)
        .map((t) =>
          withView(
            listedTool(t),
            surface.apps ? viewOf(t, surface.cards) : null,
            t.settles === "app",
          ),
        ),
    };
    bySurface.set(key, listing);
  }
  return listing;
}

/**
 * Makes the listings ahead of the first `tools/list` (each tool's JSON Schemas are the costly
 * part; the first serialisation of each listing the next): called by a server once it has
 * answered its first message, off the critical path.
 */
export function warmToolListing(selection: Selection): void {
  for (const way of ["app", "two-step", null] as const)
    for (const apps of [true, false])
      for (const cards of [true, false])
        JSON.stringify(toolListing(selection, { way, apps, cards }));
}

const views = new WeakMap<Selection, Map<boolean, readonly AppViewName[]>>();

/**
 * The views the tools of a selection are shown in: the ui:// resources to offer. Found once per
 * selection (a 2026-era request over HTTP builds its server for itself).
 */
export function viewsOffered(selection: Selection, cards: boolean): readonly AppViewName[] {
  return memoised(views, selection, cards, () => {
    const found = new Set<AppViewName>();
    for (const tool of selection.tools) {
      const view = viewOf(tool, cards);
      if (view) found.add(view);
    }
    return [...found];
  });
}

/** The MCP Apps view a tool's result is shown in: its own, or the card for a draft. */
function viewOf(tool: ToolDefinition, cards: boolean): AppViewName | null {
  if (tool.kind === "draft" || tool.settles === "app") return cards ? "confirm-write" : null;
  return tool.view ?? null;
}

/** `_meta.ui` (and the older `ui/resourceUri` key hosts of the first Apps draft read). */
function withView(entry: ListedTool, view: AppViewName | null, appOnly: boolean): ListedTool {
  if (!view) return entry;
  const resourceUri = APP_VIEWS[view].uri;
  return {
    ...entry,
    _meta: {
      ui: appOnly ? { resourceUri, visibility: ["app"] } : { resourceUri },
      "ui/resourceUri": resourceUri,
    },
  };
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
  const byName = toolsByName(selection);
  const cards = cardsAllowed(confirmation);
  const wayOf = (ctx: ServerContext) =>
    confirmation
      ? settlingWay(channelFor(server, ctx, confirmation.mode), confirmation.mode)
      : "two-step";
  server.setRequestHandler("tools/list", (_request, ctx) =>
    toolListing(selection, {
      way: wayOf(ctx),
      apps: showsApps(server, ctx),
      cards,
    }),
  );
  server.setRequestHandler(
    "tools/call",
    async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
      const tool = offeredTool(request.params.name, byName, selection);
      if (tool.settles !== undefined) checkSettlingWay(tool, wayOf(ctx));
      const checked = checkedArguments(tool, request.params.arguments ?? {});
      if (!checked.ok)
        return failed("tools/call", new ArgumentsRefused(checked.refusal), tool.name, logger);
      const context = contextFor(ctx);
      try {
        if (tool.kind === "draft") {
          return await supervise(tool, checked.data, context, ctx, server, confirmation);
        }
        return toResult(await tool.run(checked.data, context));
      } catch (error) {
        return failed("tools/call", error, tool.name, logger);
      }
    },
  );
}

const byNames = new WeakMap<Selection, ReadonlyMap<string, ToolDefinition>>();

/** A selection's tools by name, made once per selection. */
export function toolsByName(selection: Selection): ReadonlyMap<string, ToolDefinition> {
  return memoisedOn(byNames, selection, () => new Map(selection.tools.map((t) => [t.name, t])));
}

/** The tool called, or the protocol error saying why it is not offered or not known. */
function offeredTool(
  name: string,
  byName: ReadonlyMap<string, ToolDefinition>,
  selection: Selection,
): ToolDefinition {
  const tool = byName.get(name);
  if (tool) return tool;
  const hidden = whyNotOffered(name, selection);
  if (hidden)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Tool ${name} is not offered here: ${hidden}.`,
    );
  const near = closest(name, byName.keys());
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Unknown tool ${name}${near ? `; did you mean ${near}?` : "; see tools/list."}`,
  );
}

/** A confirmation tool answers only the way this client settles writes. */
function checkSettlingWay(tool: ToolDefinition, way: Surface["way"]): void {
  if (tool.settles === way) return;
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    tool.settles === "app"
      ? `Tool ${tool.name} is not offered here: it is the Confirm or Cancel button of the confirmation card, for clients that show MCP Apps.`
      : way === "app"
        ? `Tool ${tool.name} is not offered here: this client confirms writes in the card shown with each draft, where the person presses Confirm or Cancel.`
        : `Tool ${tool.name} is not offered here: this server has writes confirmed only in the client's own confirmation form or card (PORTFOLIO_CONFIRM leaves two-step out).`,
  );
}

/** The arguments as the tool's schema reads them, or the sentence naming each field refused. */
function checkedArguments(
  tool: ToolDefinition,
  raw: Record<string, unknown>,
): { ok: true; data: Record<string, unknown> } | { ok: false; refusal: string } {
  // Checked before zod, whose recursive walk would overflow the stack on deep nesting.
  const deep = tooDeep(raw);
  if (deep) return { ok: false, refusal: invalidArguments(tool.name, [deep]) };
  const parsed = tool.input.safeParse(normaliseArguments(tool.input, raw));
  if (parsed.success) return { ok: true, data: parsed.data };
  const known = Object.keys(tool.input.shape);
  return {
    ok: false,
    refusal: invalidArguments(
      tool.name,
      parsed.error.issues.map((issue) => withSuggestion(describeIssue(issue), known)),
    ),
  };
}

/**
 * A tool's output as a result. Everything in it may hold data written by others (the API's
 * names, notes, titles): it goes through the one neutralising function, so that nothing in it
 * can hide from the model or from whoever the host shows it to. What its maker already found
 * plain (a list's text and items, toolkit/budget.ts) is not tested twice.
 */
export function toResult(
  output: Awaited<ReturnType<Extract<ToolDefinition, { kind: "run" }>["run"]>>,
): CallToolResult {
  const structured = neutraliseDeep(output.structured) as Record<string, unknown>;
  const text =
    output.text === undefined
      ? JSON.stringify(structured)
      : output.plain === true
        ? output.text
        : neutralise(output.text, { lines: true });
  return {
    content: [
      ...(neutraliseDeep(output.blocks ?? []) as CallToolResult["content"]),
      { type: "text", text },
    ],
    structuredContent: structured,
  };
}

/** "colour is not a known field; did you mean color?" */
function withSuggestion(error: FieldError, known: readonly string[]): FieldError {
  if (error.rule !== "unknown field" || error.field.includes(".")) return error;
  const near = closest(error.field, known);
  return near ? { ...error, message: `${error.message}; did you mean ${near}?` } : error;
}
