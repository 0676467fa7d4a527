import type { OperationId } from "../api/catalogue.js";
import { type BilledRequest, billedLately } from "../writes/billed.js";
import type { ToolAnnotations, ToolContext } from "./definitions.js";

/** What write tools share: their usual hints, and the reads their previews need. */

/** A write that adds something new; each call drafts a new, separate write. */
export const CREATES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

/** Only the fields the caller gave: absent and null differ in a mutation (spec part 2). */
export const given = (args: Record<string, unknown>, names: readonly string[]) =>
  Object.fromEntries(Object.entries(args).filter(([k, v]) => names.includes(k) && v !== undefined));

/** A read made while drafting (to name the target in the preview), as the session's user. */
export async function lookUp(ctx: ToolContext, id: OperationId, input: object): Promise<unknown> {
  return (
    await ctx.api.call(id, input as never, {
      signal: ctx.signal,
      delegatedUser: ctx.session.delegatedUser,
    })
  ).data;
}

/**
 * The warning a billable draft carries when this caller made the same call within the hour
 * ("resolved 2 minutes ago"), so that nobody pays twice by accident; none otherwise.
 * `said` words it: the time since, and whether the API answered.
 */
export async function madeLately(
  ctx: ToolContext,
  request: Omit<BilledRequest, "client" | "delegatedUser">,
  said: (ago: string, answered: boolean) => string,
): Promise<string[]> {
  if (!ctx.writes) return [];
  const lately = await billedLately(
    ctx.writes.billed,
    { ...request, client: ctx.writes.caller.client, delegatedUser: ctx.session.delegatedUser },
    ctx.logger,
  );
  return lately ? [said(lately.ago, lately.state === "succeeded")] : [];
}
