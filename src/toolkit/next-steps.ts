import { z } from "zod";
import type { Operation } from "../api/catalogue.js";
import type { ToolContext } from "./definitions.js";

/**
 * What can be done next with the items of a result, named once per result so that the
 * assistant acts on what it just read without a search: the operations this caller is offered
 * on one item (an event's accept and reject, an alert's moves, a task's update, a document's
 * download), found by rule from the paths: those under the item's own path `{list}/{id}`,
 * deletions left out. An operation with a curated tool is named by that tool.
 */
export const nextStep = z.object({
  tool: z.string(),
  operation: z.string().optional(),
  pass: z.string().describe("What to give it."),
});
export type NextStep = z.output<typeof nextStep>;

export const nextSteps = z
  .array(nextStep)
  .optional()
  .describe("What can be done with an item of this result, and how.");

const GENERIC_READ = "call_api_read";
const GENERIC_WRITE = "draft_api_write";

/** The follow-ups of the items listed by the read at `listPath`, offered to this caller. */
export function followUps(listPath: string, ctx: ToolContext): NextStep[] {
  // A record's own path (`/alerts/{alert_id}`) is the item's; a list's items are one level down.
  const own = /\/\{([^{}/]+)\}$/.exec(listPath);
  const item = own
    ? null
    : [...ctx.api.routes.values()].find(
        (op) => op.method === "GET" && op.kind === "read" && itemParam(listPath, op.path) !== null,
      );
  const param = own ? (own[1] ?? null) : item ? itemParam(listPath, item.path) : null;
  const itemPath = own ? listPath : item?.path;
  if (!param || !itemPath) return [];
  const steps: NextStep[] = [];
  const curated = new Set<string>();
  for (const op of ctx.offer.offered.values()) {
    if (op.method === "DELETE" || !isFollowUp(op, itemPath)) continue;
    const tool = ctx.toolFor(op.id);
    if (tool && tool !== GENERIC_READ && tool !== GENERIC_WRITE) {
      if (curated.has(tool)) continue;
      curated.add(tool);
      steps.push({ tool, pass: `${param}: the item's id` });
      continue;
    }
    if (!ctx.offer.fromContract) continue; // the generic tools exist only with a contract
    steps.push({
      tool: op.kind === "read" ? GENERIC_READ : GENERIC_WRITE,
      operation: op.id,
      pass: `path {"${param}": the item's id}`,
    });
  }
  return steps;
}

/** The follow-ups of a record that a read created (a job): its status read. */
export function statusRead(created: Operation, ctx: ToolContext): NextStep[] {
  for (const op of ctx.offer.offered.values()) {
    const param = op.method === "GET" ? itemParam(created.path, op.path) : null;
    if (param) return [{ tool: GENERIC_READ, operation: op.id, pass: `path {"${param}": its id}` }];
  }
  return [];
}

/** `event_id` when `path` is `list/{event_id}`, else null. */
function itemParam(list: string, path: string): string | null {
  const match = /^\/\{([^{}/]+)\}$/.exec(path.slice(list.length));
  return path.startsWith(list) && match ? (match[1] ?? null) : null;
}

/** An action on the item (`{item}` itself, other than its read, or `{item}/verb`). */
function isFollowUp(op: Operation, itemPath: string): boolean {
  if (op.path === itemPath) return op.method !== "GET";
  return op.path.startsWith(`${itemPath}/`) && !op.path.slice(itemPath.length + 1).includes("{");
}

/** The steps as lines for the text rendering. */
export function renderSteps(steps: readonly NextStep[]): string {
  return steps
    .map((s) => `Next: ${s.tool}${s.operation ? ` ${s.operation}` : ""} with ${s.pass}`)
    .join("\n");
}
