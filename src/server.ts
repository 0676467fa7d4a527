import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { ApiClient } from "./api/client.js";
import { installCompletions } from "./completions.js";
import type { ConfirmMode } from "./config.js";
import { formValidator } from "./form-validator.js";
import type { Logger } from "./log.js";
import { installPrompts } from "./prompts.js";
import type { Directory } from "./resources/directory.js";
import { installResources } from "./resources/install.js";
import { READ_TOOLS } from "./tools/reads.js";
import { installTools } from "./tools/registry.js";
import type { SessionContext, ToolContext, ToolDefinition, WriteContext } from "./tools/types.js";
import { WRITE_TOOLS } from "./tools/writes.js";
import { VERSION } from "./version.js";
import type { WriteGate } from "./writes/gate.js";

/** Both tool sets, as one stable list (the tools/list answer is cached per list). */
const ALL_TOOLS: readonly ToolDefinition[] = [...READ_TOOLS, ...WRITE_TOOLS];
/** Long enough for a person to read the preview and decide. */
const CONFIRMATION_TIMEOUT_MS = 10 * 60_000;

/** What the assistant reads first: which tool answers what, and the rules of the road. */
export const INSTRUCTIONS = `Portfolio data of one investment-management entity, through its Partner API.
- Overview: get_portfolio_overview. Operations: list_operations (compact; filters: exact name, status, spv_id), get_operation (full: kpi_snapshot, financial_summary), list_operation_notes. Pipeline: list_deals, get_deal. Structures: list_spvs. Operators: find_operators, get_operator. Dates: list_calendar_events. Alerts: get_unread_notification_count. Reporting: export_inrev_report. The user's own views and dashboards: list_my_saved_views, list_my_dashboards.
- Status filters take taxonomy codes (get_taxonomies), never labels; status=active means sourcing, instruction, travaux, commercialisation, livraison. Units of business fields: get_field_definitions.
- Lists are paged: total and next_offset (pass it as offset); all_pages=true walks every page. Amounts are decimal strings in EUR: quote them as given.
- Writes are drafts until the user confirms the exact request; never claim something was written before the tool says so.`;

export interface ServerDeps {
  api: ApiClient;
  directory: Directory;
  session: SessionContext;
  logger: Logger;
  exportDir: string | null;
  /** Absent in read-only mode: no write tool is registered at all. */
  writes?: { gate: WriteGate; mode: ConfirmMode };
  /** The client's tool allowlist (clients file); null for every tool. */
  allowedTools?: ReadonlySet<string> | null;
}

/** Every tool name the server can register, for validating allowlists. */
export const allToolNames = (): string[] => ALL_TOOLS.map((t) => t.name);
/** The tools that draft a write. */
export const writeToolNames = (): string[] =>
  WRITE_TOOLS.filter((t) => !["confirm_write", "cancel_write"].includes(t.name)).map((t) => t.name);

const filtered = new Map<string, readonly ToolDefinition[]>();

/** The same list object for the same selection, so its tools/list answer is computed once. */
function selectTools(
  base: readonly ToolDefinition[],
  allowed: ReadonlySet<string> | null | undefined,
) {
  if (!allowed) return base;
  const selected = base.filter((t) => allowed.has(t.name));
  const key = selected.map((t) => t.name).join(",");
  const known = filtered.get(key);
  if (known) return known;
  filtered.set(key, selected);
  return selected;
}

type RequestExtra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1];

/** One MCP server for one session: tools, resources, prompts and completion over the API client. */
export function createMcpServer(deps: ServerDeps): Server {
  const server = new Server(
    { name: "portfolio-mcp", title: "Portfolio (Partner API)", version: VERSION },
    {
      capabilities: { logging: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: formValidator,
    },
  );
  const contextFor = (extra: RequestExtra): ToolContext => ({
    api: deps.api,
    session: deps.session,
    logger: deps.logger,
    exportDir: deps.exportDir,
    signal: extra.signal,
    progress: progressReporter(extra),
    writes: deps.writes ? writeContext(server, deps, deps.writes, extra) : undefined,
  });
  const tools = selectTools(deps.writes ? ALL_TOOLS : READ_TOOLS, deps.allowedTools);
  installTools(server, tools, contextFor, deps.logger);
  installResources(server, tools, contextFor, deps.logger);
  installPrompts(server, contextFor);
  installCompletions(server, deps.directory, deps.logger);
  return server;
}

/** Progress notifications, sent only when the client asked for them with a progress token. */
function progressReporter(extra: RequestExtra): ToolContext["progress"] {
  const token = extra._meta?.progressToken;
  return async (progress, total, message) => {
    if (token === undefined) return;
    await extra.sendNotification({
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

function writeContext(
  server: Server,
  deps: ServerDeps,
  writes: NonNullable<ServerDeps["writes"]>,
  extra: RequestExtra,
): WriteContext {
  const canAsk =
    writes.mode !== "two-step" && Boolean(server.getClientCapabilities()?.elicitation?.form);
  return {
    gate: writes.gate,
    mode: writes.mode,
    caller: {
      sessionId: deps.session.sessionId,
      client: deps.session.client ?? `stdio:${server.getClientVersion()?.name ?? "unnamed"}`,
    },
    ask: canAsk ? (message) => askForConfirmation(server, message, extra) : null,
  };
}

/**
 * Asks the human inside the tool call (form elicitation), tied to the call's request so that
 * an HTTP client receives it on the call's own stream. Only an explicit yes counts.
 */
async function askForConfirmation(server: Server, message: string, extra: RequestExtra) {
  const answer = await server.elicitInput(
    {
      mode: "form",
      message,
      requestedSchema: {
        type: "object",
        properties: {
          confirm: {
            type: "boolean",
            title: "Write this",
            description: "Yes sends exactly this request, once. No sends nothing.",
            default: false,
          },
        },
        required: ["confirm"],
      },
    },
    { relatedRequestId: extra.requestId, timeout: CONFIRMATION_TIMEOUT_MS },
  );
  if (answer.action !== "accept") return answer.action;
  return answer.content?.confirm === true ? "accept" : "decline";
}
