import { matchNamed } from "../api/directory.js";
import type { Domain } from "../toolkit/definitions.js";
import { isUuid, promptRefusal } from "../toolkit/prompt-args.js";
import { detailTool } from "../toolkit/read-tools.js";

/** The whole book at a glance: aggregates, and a review prompt built on them. */
export const portfolio: Domain = {
  tools: [
    detailTool({
      name: "get_portfolio_overview",
      title: "Portfolio overview",
      description:
        "Portfolio aggregates: operation counts and amounts by status, asset class and SPV, and the deal pipeline. Start here for any portfolio-wide question.",
      family: "portfolio",
      operation: "portfolio_get",
      toRequest: () => ({}),
      view: "overview",
    }),
  ],
  resources: [
    {
      name: "overview",
      title: "Portfolio overview",
      description: "Aggregates by status, asset class and SPV.",
      family: "portfolio",
      uri: "portfolio://overview",
      tool: "get_portfolio_overview",
      mimeType: "application/json",
    },
  ],
  prompts: [
    {
      name: "portfolio_review",
      title: "Portfolio review",
      description:
        "A structured review of the portfolio, or of one SPV: exposure, risks, what is due.",
      family: "portfolio",
      tools: [
        "get_portfolio_overview",
        "list_operations",
        "get_operation",
        "list_calendar_events",
        "get_unread_notification_count",
      ],
      arguments: [
        {
          name: "spv_id",
          description: "Limit the review to one SPV (its id; completion searches SPV names).",
          required: false,
          complete: async (d, typed) => matchNamed(await d.spvs(), typed),
        },
      ],
      async render(args) {
        if (args.spv_id !== undefined && !isUuid(args.spv_id)) {
          throw promptRefusal(
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
                  "4. list_calendar_events with from and to: deadlines in the next 30 days, covenant tests first.",
                  "5. get_unread_notification_count: mention critical alerts.",
                  "Write: a three-line summary; exposure (amounts exactly as the API gives them, in EUR); watch list with reasons; what is due and when; suggested next steps. Cite operation names, not only ids.",
                ].join("\n"),
              },
            },
          ],
        };
      },
    },
  ],
};
