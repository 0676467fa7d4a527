import {
  CLIENT_INFO_META_KEY,
  type Implementation,
  type JSONRPCRequest,
  type Result,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { ApiClient } from "./api/client.js";
import type { Directory } from "./api/directory.js";
import { offerFor } from "./api/offer.js";
import type { ConfirmMode, DelegatedUser } from "./config.js";
import { asPrincipal, SERVER_PRINCIPAL } from "./http/principal.js";
import { select } from "./inventory/index.js";
import type { ToolContext } from "./inventory/types.js";
import type { Logger } from "./log.js";
import { installCompletions } from "./mcp/completions.js";
import { type ConfirmationDeps, cardsAllowed, showsApps } from "./mcp/confirm.js";
import { formValidator } from "./mcp/form-validator.js";
import { SERVER_ICONS } from "./mcp/icons.js";
import { installPrompts } from "./mcp/prompts.js";
import { installResources } from "./mcp/resources.js";
import { installTools, viewsOffered } from "./mcp/tools.js";
import { VERSION } from "./version.js";
import type { WriteGate } from "./writes/gate.js";
import type { Caller } from "./writes/intent.js";
import type { Sealer } from "./writes/seal.js";

/** What the assistant reads first: which tool answers what, and the rules of the road. */
export const INSTRUCTIONS = `Portfolio data of one investment-management entity, through its Partner API.
- Overview: get_portfolio_overview. Operations: list_operations (compact; filters: name_contains, exact name, status, spv_id), get_operation (full: kpi_snapshot, financial_summary), list_operation_notes. Pipeline: list_deals, get_deal. Structures: list_spvs. Operators: find_operators, get_operator. Dates: list_calendar_events (from, to, event_type, operation_id). Unread notifications: get_unread_notification_count. Reporting: export_inrev_report. The user's own views and dashboards: list_my_saved_views, list_my_dashboards.
- Alerts: list_alerts (critical first); act_on_alert acknowledges, resolves, postpones (until a date) or marks a false positive.
- An operation's history: get_operation_timeline (newest first; narrative=true adds a French summary).
- Search by name, code or document text: search_portfolio (q, types).
- Status filters take taxonomy codes (get_taxonomies), never labels; status=active means sourcing, instruction, travaux, commercialisation, livraison. Units of business fields: get_field_definitions.
- Lists are paged: total and next_offset (pass it as offset); all_pages=true walks every page. Amounts are decimal strings in EUR: quote them as given.
- Writes are drafts until the user confirms the exact request; never claim something was written before the tool says so.`;

const SERVER_INFO: Implementation = {
  name: "portfolio-mcp",
  title: "Portfolio (Partner API)",
  version: VERSION,
  icons: SERVER_ICONS,
};

/** Listings vary by caller (allowlists), never mid-session: cacheable, but only privately. */
const LISTING = { ttlMs: 300_000, cacheScope: "private" as const };

export interface ServerDeps {
  api: ApiClient;
  directory: Directory;
  logger: Logger;
  exportDir: string | null;
  /** Absent in read-only mode: no write tool is offered at all. */
  writes?: { gate: WriteGate; mode: ConfirmMode; sealer: Sealer };
  /** PORTFOLIO_ALLOW_SENSITIVE: sensitive operations offered anyway (none by default). */
  allowSensitive?: ReadonlySet<string>;
}

const NONE: ReadonlySet<string> = new Set();

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
}

/**
 * One MCP server for one caller, built from the inventory filtered for that caller: every
 * method (tools, resources, templates, prompts, completion) answers from the same selection.
 */
export function createMcpServer(deps: ServerDeps, caller: CallerSpec): Server {
  const writes = caller.readOnly ? undefined : deps.writes;
  const offer = offerFor(deps.api.routes, {
    readOnly: !writes,
    delegatedUser: caller.delegatedUser !== null,
    allowSensitive: deps.allowSensitive ?? NONE,
    allowlist: caller.allowedTools,
  });
  const selection = select(offer);
  const server = new CallerServer(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: false },
      resources: { listChanged: false },
      prompts: { listChanged: false },
      completions: {},
      logging: {},
    },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: formValidator,
    cacheHints: {
      "tools/list": LISTING,
      "prompts/list": LISTING,
      "resources/templates/list": LISTING,
      "resources/list": { ttlMs: 60_000, cacheScope: "private" },
      "server/discover": { ttlMs: 300_000, cacheScope: "public" },
    },
    // In-call confirmation for 2025 sessions is ours (src/mcp/confirm.ts); the SDK's shim would
    // also lift a 2025 client's own requestState and inputResponses from its parameters.
    inputRequired: { legacyShim: false },
  });

  const identify = (ctx: ServerContext): Caller => ({
    sessionId: ctx.sessionId ?? caller.sessionId ?? "request",
    client: caller.client ?? `stdio:${clientName(server, ctx)}`,
  });
  server.principalOf = (ctx) => identify(ctx).client;
  const contextFor = (ctx: ServerContext): ToolContext => ({
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
      ? { gate: writes.gate, caller: identify(ctx), sealer: writes.sealer }
      : undefined,
    offer,
    toolFor: (id) => selection.toolByOperation.get(id) ?? null,
  });
  const confirmation: ConfirmationDeps | null = writes
    ? { gate: writes.gate, mode: writes.mode, sealer: writes.sealer, caller: identify }
    : null;

  installTools(server, selection, contextFor, confirmation, deps.logger);
  const views = viewsOffered(selection, cardsAllowed(confirmation));
  installResources(server, selection, contextFor, deps.logger, views, (ctx) =>
    showsApps(server, ctx),
  );
  installPrompts(server, selection, contextFor);
  installCompletions(server, selection, deps.directory, deps.logger);
  return server;
}

/**
 * The SDK's server, each request's handler run for its caller: every upstream request made
 * while serving it (walks, retries, a confirmed write) counts against that caller's share of
 * the API key's rate (src/http/principal.ts). The SDK's hook wraps every handler, whatever the
 * transport, the protocol era or the session.
 */
class CallerServer extends Server {
  principalOf: (ctx: ServerContext) => string = () => SERVER_PRINCIPAL;

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const wrapped = super._wrapHandler(method, handler);
    return (request, ctx) => asPrincipal(this.principalOf(ctx), () => wrapped(request, ctx));
  }
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
