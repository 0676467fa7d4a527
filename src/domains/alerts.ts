import { z } from "zod";
import { CATALOGUE } from "../api/catalogue.js";
import { matchCodes, matchNamed } from "../api/directory.js";
import { record } from "../api/response.js";
import { ALERT_STATUSES, businessDate, SEVERITIES } from "../api/schemas.js";
import { UserFacingError } from "../errors.js";
import { type Domain, defineTool, type ToolContext } from "../toolkit/definitions.js";
import { alerts as alertItems, metricAgainstThreshold } from "../toolkit/present.js";
import { listTool } from "../toolkit/read-tools.js";
import { given, lookUp } from "../toolkit/write-tools.js";
import { quote } from "../writes/display.js";
import { outcomeSchema } from "../writes/outcome.js";

const q = CATALOGUE;

/** Each action is its own operation (the export: one route per move), told as a sentence. */
const MOVES = {
  acknowledge: { operation: "alert_acknowledge", action: "Acknowledge an alert" },
  resolve: { operation: "alert_resolve", action: "Resolve an alert" },
  postpone: { operation: "alert_postpone", action: "Postpone an alert" },
  false_positive: {
    operation: "alert_false_positive",
    action: "Mark an alert as a false positive",
  },
} as const;
type Action = keyof typeof MOVES;
const ACTIONS = Object.keys(MOVES) as [Action, ...Action[]];

/** Resolved and false positive are final: no route moves an alert out of them. */
const CLOSED = new Set(["resolved", "false_positive"]);
const POSTPONE_MAX_DAYS = 365;
const DAY_MS = 86_400_000;

/**
 * The postpone window (the export: after today, at most 365 days ahead), checked against the
 * UTC date. The API's own business date is that day or the next (a French entity; the sandbox
 * keeps UTC), so only dates it must refuse are refused here; the API has the last word.
 */
function untilIssue(until: string, nowMs: number): string | null {
  const today = businessDateOf(nowMs);
  if (until <= today) return `must be after today (${today})`;
  const latest = businessDateOf(nowMs + (POSTPONE_MAX_DAYS + 1) * DAY_MS);
  if (until > latest) return `must be at most ${POSTPONE_MAX_DAYS} days ahead (by ${latest})`;
  return null;
}
const businessDateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A code from the API shown bare when it is one (critical, ltv_breach), else quoted. */
const code = (value: unknown) =>
  typeof value === "string" && /^[a-z0-9_]{1,50}$/.test(value)
    ? value
    : quote(String(value ?? "unknown"), 50);

/** The operation an alert concerns, by name; its id alone if the name cannot be read. */
async function operationLabel(ctx: ToolContext, id: unknown): Promise<string | null> {
  if (typeof id !== "string" || id === "") return null;
  try {
    const operation = record(await lookUp(ctx, "operation_get", { path: { operation_id: id } }));
    if (typeof operation.name === "string") return `operation ${quote(operation.name)}`;
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    // A key that may act on alerts without reading operations still gets a faithful preview.
  }
  return `operation ${quote(id, 64)}`;
}

/** Alerts: what calls for attention, and the moves a person makes on them. */
export const alerts: Domain = {
  tools: [
    listTool({
      name: "list_alerts",
      title: "List alerts",
      description:
        "Alerts, critical first then newest; compact, with the metric against its threshold. Paged.",
      family: "alerts",
      operation: "alerts_list",
      item: alertItems.item,
      present: alertItems.present,
      query: q.alerts_list.query.shape,
      pageable: false,
      narrowHint: "filter by status, severity or operation_id, or lower limit",
    }),
    defineTool({
      kind: "draft",
      name: "act_on_alert",
      title: "Act on an alert",
      description:
        "Drafts a move on one alert (postpone needs until), sent once the user confirms. resolve and false_positive are final.",
      family: "alerts",
      // destructiveHint true: the hints cover the tool's every action, and resolve and
      // false_positive close the alert for good (no route reopens it; postpone also replaces
      // postponed_until). The API keeps the history, but the move cannot be undone.
      // idempotentHint false: a second acknowledge is refused (409), but a second postpone is
      // applied again, and each call drafts a new write.
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
      operations: [
        "alert_get",
        "operation_get",
        "alert_acknowledge",
        "alert_resolve",
        "alert_postpone",
        "alert_false_positive",
      ],
      writes: ["alert_acknowledge", "alert_resolve", "alert_postpone", "alert_false_positive"],
      output: outcomeSchema,
      input: z
        .strictObject({
          alert_id: q.alert_get.params.shape.alert_id,
          action: z.enum(ACTIONS),
          until: businessDate.optional().describe("The date it reopens; postpone only."),
          comment: q.alert_postpone.body.shape.comment,
        })
        .superRefine((a, ctx) => {
          const issue = (message: string) =>
            ctx.addIssue({ code: "custom", path: ["until"], message });
          if (a.action === "postpone" && a.until === undefined)
            issue("is required to postpone (the date the alert reopens)");
          if (a.action !== "postpone" && a.until !== undefined)
            issue(`is only for postpone, not ${a.action}`);
          const window = a.until === undefined ? null : untilIssue(a.until, Date.now());
          if (a.action === "postpone" && window) issue(window);
        }),
      async draft(args, ctx) {
        const move = MOVES[args.action];
        const alert = record(await lookUp(ctx, "alert_get", { path: { alert_id: args.alert_id } }));
        const title =
          typeof alert.title === "string" ? quote(alert.title) : `«${args.alert_id.toLowerCase()}»`;
        const status = alert.status;
        // The lifecycle the export's sandbox documents (README, Alerts): refused here, so that
        // no one approves a move the API must refuse.
        if (
          (typeof status === "string" && CLOSED.has(status)) ||
          (args.action === "acknowledge" && status === "acknowledged")
        ) {
          throw new UserFacingError(
            `The alert ${title} is already ${code(status)}${CLOSED.has(String(status)) ? ", which is final" : ""}: it cannot be ${args.action === "false_positive" ? "marked a false positive" : `${args.action}d`}. Nothing was drafted.`,
          );
        }
        const operation = await operationLabel(ctx, alert.operation_id);
        const body = given(args, ["until", "comment"]);
        return {
          operation: move.operation,
          path: { alert_id: args.alert_id },
          // The three moves without a date take no body unless there is a comment.
          body: Object.keys(body).length > 0 ? body : undefined,
          excerpt: args.comment,
          preview: {
            action: args.until ? `${move.action} until ${args.until}` : move.action,
            target: `${code(alert.severity)} alert ${title} (${[code(alert.alert_type), code(status), ...metricAgainstThreshold(alert.metric)].join(", ")})${operation ? ` on ${operation}` : ""}`,
            fields: body,
            billable: false,
          },
        };
      },
    }),
  ],
  resources: [
    {
      name: "alerts",
      title: "Alerts",
      description: "Alerts, critical first, compact; filter by status, severity, type, operation.",
      family: "alerts",
      uri: "portfolio://alerts{?status,severity,alert_type,operation_id,limit,offset}",
      tool: "list_alerts",
      mimeType: "application/json",
      complete: {
        status: async (_d, typed) => matchCodes([...ALERT_STATUSES], typed),
        severity: async (_d, typed) => matchCodes([...SEVERITIES], typed),
        operation_id: async (d, typed) => matchNamed(await d.operations(), typed),
      },
    },
  ],
};
