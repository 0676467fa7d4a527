import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { INVALID_PARAMS, ProtocolError } from "./protocol-error.js";
import { type Directory, matchNamed } from "./resources/directory.js";
import { userMessage } from "./tools/errors.js";
import type { ToolContext } from "./tools/types.js";

type RequestExtra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1];

interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
  complete(directory: Directory, typed: string): Promise<string[]>;
}

interface PromptSpec {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  render(args: Record<string, string>, ctx: ToolContext): Promise<GetPromptResult>;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const PROMPTS: readonly PromptSpec[] = [
  {
    name: "portfolio_review",
    title: "Portfolio review",
    description:
      "A structured review of the portfolio, or of one SPV: exposure, risks, what is due.",
    arguments: [
      {
        name: "spv_id",
        description: "Limit the review to one SPV (its id; completion searches SPV names).",
        required: false,
        complete: async (d, typed) => matchNamed(await d.spvs(), typed),
      },
    ],
    async render(args) {
      if (args.spv_id !== undefined && !UUID.test(args.spv_id)) {
        throw new ProtocolError(
          INVALID_PARAMS,
          "portfolio_review was not rendered: spv_id must be a UUID; give an SPV id (completion finds them by name).",
        );
      }
      const scope = args.spv_id ? `the SPV ${args.spv_id}` : "the whole portfolio";
      const filter = args.spv_id ? ` with spv_id=${args.spv_id}` : "";
      return {
        description: `Review of ${scope}`,
        messages: [
          {
            role: "user",
            content: {
              type: "text",
              text: [
                `Review ${scope} for a portfolio manager. Gather facts with the read-only tools, then write the review.`,
                `1. get_portfolio_overview: totals, exposure by status and asset class${args.spv_id ? ", and this SPV's line" : ""}.`,
                `2. list_operations with status=active${filter} (all_pages=true): the live book; note operations whose statut_interne is not nominal.`,
                "3. get_operation for each watched operation: kpi_snapshot (LTV, DSCR, outstanding) and reporting_summary.",
                "4. list_calendar_events (all_pages=true): deadlines in the next 30 days, covenant tests first.",
                "5. get_unread_notification_count: mention critical alerts.",
                "Write: a three-line summary; exposure (amounts exactly as the API gives them, in EUR); watch list with reasons; what is due and when; suggested next steps. Cite operation names, not only ids.",
              ].join("\n"),
            },
          },
        ],
      };
    },
  },
  {
    name: "operation_brief",
    title: "Operation brief",
    description: "Everything about one operation: status, figures, notes, upcoming events.",
    arguments: [
      {
        name: "operation_id",
        description: "The operation's id (completion searches operation names).",
        required: true,
        complete: async (d, typed) => matchNamed(await d.operations(), typed),
      },
    ],
    async render(args, ctx) {
      const id = args.operation_id ?? "";
      if (!UUID.test(id))
        throw new ProtocolError(
          INVALID_PARAMS,
          "operation_brief was not rendered: operation_id must be a UUID; give an operation id (completion finds them by name).",
        );
      const call = <T>(promise: Promise<T>) =>
        promise.catch((error: unknown) => {
          throw new ProtocolError(INVALID_PARAMS, userMessage(error, "operation_brief"));
        });
      const [operation, notes] = await Promise.all([
        call(ctx.api.call("operation_get", { path: { operation_id: id } }, { signal: ctx.signal })),
        call(
          ctx.api.call(
            "operation_notes_list",
            { path: { operation_id: id }, query: { limit: 20 } },
            { signal: ctx.signal },
          ),
        ),
      ]);
      const name = (operation.data as { name?: unknown }).name;
      return {
        description: `Brief on ${typeof name === "string" ? name : id}`,
        messages: [
          {
            role: "user",
            content: {
              type: "resource",
              resource: {
                uri: `portfolio://operations/${id}`,
                mimeType: "application/json",
                text: JSON.stringify(operation.data),
              },
            },
          },
          {
            role: "user",
            content: {
              type: "resource",
              resource: {
                uri: `portfolio://operations/${id}/notes`,
                mimeType: "application/json",
                text: JSON.stringify(notes.data),
              },
            },
          },
          {
            role: "user",
            content: {
              type: "text",
              text: [
                `Brief me on the operation above (${typeof name === "string" ? name : id}) in under 300 words:`,
                "status and phase; the financing (amounts exactly as given, EUR) and KPIs (LTV, DSCR, outstanding);",
                "what the latest notes say and any unresolved risk; the operator (get_operator) and SPV;",
                "upcoming calendar events for it (list_calendar_events, filter on operation_id). Units come from get_field_definitions.",
              ].join(" "),
            },
          },
        ],
      };
    },
  },
];

export function installPrompts(
  server: Server,
  contextFor: (extra: RequestExtra) => ToolContext,
): void {
  server.registerCapabilities({ prompts: { listChanged: false } });
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: PROMPTS.map((p) => ({
      name: p.name,
      title: p.title,
      description: p.description,
      arguments: p.arguments.map(({ name, description, required }) => ({
        name,
        description,
        required,
      })),
    })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const prompt = PROMPTS.find((p) => p.name === request.params.name);
    if (!prompt) throw new ProtocolError(INVALID_PARAMS, `Unknown prompt ${request.params.name}.`);
    const args = request.params.arguments ?? {};
    for (const arg of prompt.arguments) {
      if (arg.required && !args[arg.name]) {
        throw new ProtocolError(
          INVALID_PARAMS,
          `${prompt.name} was not rendered: ${arg.name} is required; give it and ask again.`,
        );
      }
    }
    return prompt.render(args, contextFor(extra));
  });
}
