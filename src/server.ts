import {
  CLIENT_INFO_META_KEY,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { ApiClient } from "./api/client.js";
import type { Directory } from "./api/directory.js";
import { offerFor } from "./api/offer.js";
import type { ConfirmMode, DelegatedUser } from "./config.js";
import type { Observer } from "./events.js";
import { type Selection, select } from "./inventory/index.js";
import type { Logger } from "./log.js";
import { installCompletions } from "./mcp/completions.js";
import { type ConfirmationDeps, cardsAllowed, showsApps } from "./mcp/confirm.js";
import { installPrompts } from "./mcp/prompts.js";
import { installResources } from "./mcp/resources.js";
import { installTools, viewsOffered } from "./mcp/tools.js";
import { memoisedOn } from "./memo.js";
import { instructionsFor, newServer, type PortfolioServer } from "./server-shell.js";
import type { Refusals, ToolContext } from "./toolkit/definitions.js";
import { type BilledCalls, BilledInMemory } from "./writes/billed.js";
import { describeUser, type WriteGate } from "./writes/gate.js";
import type { Caller, Grants } from "./writes/intent.js";
import type { Sealer } from "./writes/seal.js";

export interface ServerDeps {
  api: ApiClient;
  directory: Directory;
  logger: Logger;
  exportDir: string | null;
  /** Absent in read-only mode: no write tool is offered at all. */
  writes?: {
    gate: WriteGate;
    mode: ConfirmMode;
    sealer: Sealer;
    /** Billable calls made lately, on the fleet's Redis; this process's memory when absent. */
    billed?: BilledCalls;
  };
  /** PORTFOLIO_ALLOW_SENSITIVE: sensitive operations offered anyway (none by default). */
  allowSensitive?: ReadonlySet<string>;
  /** Told of every request that reads or changes data (the audit trail, telemetry). */
  observer?: Observer;
  /** Operations the API refused to callers lately: one memory for every caller's server. */
  refusals: Refusals;
}

const NONE: ReadonlySet<string> = new Set();
/** Billable calls made through this process, when no shared store is given (one replica). */
const BILLED_HERE = new BilledInMemory();

/** Who one server instance serves: fixed for a session (2025) or a request (2026). */
export interface CallerSpec {
  /** The 2025 session, when there is one; 2026 requests carry none. */
  sessionId: string | null;
  delegatedUser: DelegatedUser | null;
  /** The HTTP client's identity; null over stdio (the client's own name is used). */
  client: string | null;
  readOnly: boolean;
  /** The client's allowlist (clients file): tool names, operation ids, families; null for all. */
  allowedTools: ReadonlySet<string> | null;
  /** The signed-in person's e-mail, when the sign-in names one (for the audit trail). */
  email?: string | null;
}

/**
 * One MCP server for one caller, built from the inventory filtered for that caller: every
 * method (tools, resources, templates, prompts, completion) answers from the same selection.
 */
export function createMcpServer(deps: ServerDeps, caller: CallerSpec): Server {
  const selection = selectionFor(deps, caller);
  const server = newServer(instructionsOf(selection));
  installMcp(server, deps, caller, selection);
  return server;
}

const instructions = new WeakMap<Selection, string>();

/**
 * The instructions name only what this caller is offered, like every other item: made once per
 * selection, as a 2026-era request over HTTP builds its server for itself.
 */
function instructionsOf(selection: Selection): string {
  return memoisedOn(instructions, selection, () =>
    instructionsFor(new Set(selection.tools.map((t) => t.name))),
  );
}

/** What one caller is offered: the inventory filtered by the deployment's and its own rules. */
export function selectionFor(deps: ServerDeps, caller: CallerSpec) {
  const writes = caller.readOnly ? undefined : deps.writes;
  return select(
    offerFor(deps.api.routes, {
      readOnly: !writes,
      delegatedUser: caller.delegatedUser !== null,
      allowSensitive: deps.allowSensitive ?? NONE,
      allowlist: caller.allowedTools,
    }),
  );
}

/** Registers the caller's tools, resources, prompts and completions on a server. */
export function installMcp(
  server: PortfolioServer,
  deps: ServerDeps,
  caller: CallerSpec,
  selection = selectionFor(deps, caller),
): void {
  const writes = caller.readOnly ? undefined : deps.writes;
  const identify = identifier(server, caller);
  // Every upstream request made while serving this caller counts against its share of the key.
  server.principalOf = (ctx) => identify(ctx).client;
  if (deps.observer)
    server.watch = {
      observer: deps.observer,
      actorOf: (ctx) => ({
        principal: identify(ctx).client,
        email: caller.email ?? null,
        delegatedUser: describeUser(caller.delegatedUser),
        session: ctx.sessionId ?? caller.sessionId,
      }),
    };
  const contextFor = toolContexts(deps, caller, selection, identify);
  const confirmation: ConfirmationDeps | null = writes
    ? { gate: writes.gate, mode: writes.mode, sealer: writes.sealer, caller: identify }
    : null;

  installTools(server, selection, contextFor, confirmation, deps.logger);
  const views = viewsOffered(selection, cardsAllowed(confirmation));
  installResources(server, selection, contextFor, deps.logger, views, (ctx) =>
    showsApps(server, ctx),
  );
  installPrompts(server, selection, contextFor, deps.logger);
  installCompletions(server, selection, deps.directory, deps.logger);
}

/** Who a request comes from, as the write gate records it with each draft. */
function identifier(server: Server, caller: CallerSpec): (ctx: ServerContext) => Caller {
  // What this caller may use, kept with each draft: a delivery re-checks it on any replica.
  const grants: Grants = {
    readOnly: caller.readOnly,
    tools: caller.allowedTools ? [...caller.allowedTools].sort() : null,
  };
  return (ctx) => ({
    sessionId: ctx.sessionId ?? caller.sessionId ?? "request",
    client: caller.client ?? `stdio:${clientName(server, ctx)}`,
    grants,
    email: caller.email ?? null,
  });
}

/** What a tool, resource or prompt of this caller runs with, for one request. */
function toolContexts(
  deps: ServerDeps,
  caller: CallerSpec,
  selection: Selection,
  identify: (ctx: ServerContext) => Caller,
): (ctx: ServerContext) => ToolContext {
  const writes = caller.readOnly ? undefined : deps.writes;
  return (ctx) => ({
    api: deps.api,
    session: {
      sessionId: ctx.sessionId ?? caller.sessionId ?? "request",
      delegatedUser: caller.delegatedUser,
      client: caller.client,
    },
    logger: deps.logger,
    exportDir: deps.exportDir,
    signal: ctx.mcpReq.signal,
    progress: progressReporter(ctx),
    writes: writes
      ? {
          gate: writes.gate,
          caller: identify(ctx),
          sealer: writes.sealer,
          billed: writes.billed ?? BILLED_HERE,
        }
      : undefined,
    offer: selection.offer,
    directory: deps.directory,
    toolFor: (id) => selection.toolByOperation.get(id) ?? null,
    refusals: deps.refusals,
  });
}

/** The client's own name: from the 2026 request envelope, or what it said at initialize. */
function clientName(server: Server, ctx: ServerContext): string {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const info = envelope?.[CLIENT_INFO_META_KEY] as { name?: unknown } | undefined;
  const name = typeof info?.name === "string" ? info.name : server.getClientVersion()?.name;
  return name ?? "unnamed";
}

/** Progress notifications, sent only when the client asked for them with a progress token. */
function progressReporter(ctx: ServerContext): ToolContext["progress"] {
  const token = ctx.mcpReq._meta?.progressToken;
  return async (progress, total, message) => {
    if (token === undefined) return;
    await ctx.mcpReq.notify({
      method: "notifications/progress",
      params: {
        progressToken: token,
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message ? { message } : {}),
      },
    });
  };
}
