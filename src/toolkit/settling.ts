import { UserFacingError } from "../errors.js";
import { rememberBilled } from "../writes/billed.js";
import type { Channel, Intent } from "../writes/intent.js";
import type { ToolContext } from "./definitions.js";
import { onlyTheApiKnew } from "./refusals.js";

/**
 * Settling a draft, whichever channel the person answered by (the model's confirm_write and
 * cancel_write, the card's buttons, a form's answer): the gate decides, and what a delivered
 * write teaches is remembered.
 */

/** The write gate and who is calling; a read-only server has none. */
export function writesOf(ctx: ToolContext): NonNullable<ToolContext["writes"]> {
  if (!ctx.writes) throw new UserFacingError("This server is read-only; nothing can be written.");
  return ctx.writes;
}

/** Sends a draft once (confirming again sends nothing), by the channel that asks. */
export async function confirmDraft(
  ctx: ToolContext,
  confirmationId: string,
  via: Channel,
): Promise<Intent> {
  const writes = writesOf(ctx);
  const user = ctx.session.delegatedUser;
  return settled(ctx, await writes.gate.confirm(confirmationId, writes.caller, user, via));
}

/** Drops a pending draft, by the channel that asks: `declined` when the person said no. */
export function cancelDraft(
  ctx: ToolContext,
  confirmationId: string,
  via: Channel,
  how: "cancelled" | "declined" = "cancelled",
): Promise<Intent> {
  const writes = writesOf(ctx);
  return writes.gate.cancel(confirmationId, writes.caller, ctx.session.delegatedUser, via, how);
}

/**
 * A confirmed write, once the gate settled it, handed back after what it teaches is remembered:
 * a refusal only the API could know (a route or IP restriction, rights, a key narrowed since its
 * export), like a refused read; a billable call sent, for the next draft of the same call to say
 * so (writes/billed.ts).
 */
async function settled(ctx: ToolContext, intent: Intent): Promise<Intent> {
  const error = intent.error;
  if (intent.state === "failed" && error && onlyTheApiKnew(error))
    ctx.refusals.remember(ctx.session, intent.operation, error.message);
  if (ctx.writes) await rememberBilled(ctx.writes.billed, intent, ctx.logger);
  return intent;
}
