import type {
  CallToolResult,
  InputRequiredResult,
  Server,
  ServerContext,
} from "@modelcontextprotocol/server";
import type { ConfirmMode } from "../config.js";
import { UserFacingError } from "../errors.js";
import type { DraftTool, ToolContext } from "../toolkit/definitions.js";
import { CARD_TOKEN_META, cardToken } from "../writes/card.js";
import type { WriteDraft, WriteGate } from "../writes/gate.js";
import type { Caller, Channel } from "../writes/intent.js";
import { outcomeOf } from "../writes/outcome.js";
import { roundTripState } from "../writes/round-trip.js";
import type { Sealer } from "../writes/seal.js";
import { channelFor, noWayToConfirm } from "./confirm-channel.js";
import { answered, ask, askInCall, outcome } from "./confirm-form.js";

export {
  cardsAllowed,
  channelFor,
  clientCapabilities,
  settlingWay,
  showsApps,
} from "./confirm-channel.js";
export type { Channel };

export interface ConfirmationDeps {
  gate: WriteGate;
  mode: ConfirmMode;
  sealer: Sealer;
  /** Who is calling, for binding intents: the client identity and session. */
  caller(ctx: ServerContext): Caller;
}

const CARD_NOTE =
  "Nothing has been written. The user confirms or cancels in the card shown with this result; do not ask them to confirm in the chat, and do not say it was written until the card reports it.";

/**
 * A draft tool's call: the first round drafts and asks, by the channel the client has
 * (confirm-channel.ts); an input-required retry carries the sealed state and the person's
 * answer (confirm-form.ts), and only an explicit yes sends, once.
 */
export async function supervise(
  tool: DraftTool,
  args: Record<string, unknown>,
  context: ToolContext,
  ctx: ServerContext,
  server: Server,
  deps: ConfirmationDeps | null,
): Promise<CallToolResult | InputRequiredResult> {
  if (!deps) throw new UserFacingError("This server is read-only; nothing can be written.");
  const caller = deps.caller(ctx);
  const user = context.session.delegatedUser;
  const call = { tool: tool.name, args };
  const sealed = ctx.mcpReq.envelope !== undefined ? ctx.mcpReq.requestState() : undefined;
  if (typeof sealed === "string") return answered(call, sealed, caller, context, ctx, deps);

  const channel = channelFor(server, ctx, deps.mode);
  if (channel === null) throw noWayToConfirm(deps.mode);
  const draft = await draftOf(tool, args, context);
  const intent = await deps.gate.propose(draft, caller, user, channel);
  switch (channel) {
    case "two-step":
      return outcome(outcomeOf(intent));
    case "card":
      // The token goes to the card alone, in the result's _meta: nothing the model reads (text
      // or structured content) can settle a card's draft.
      return outcome(
        { ...outcomeOf(intent), message: CARD_NOTE },
        { [CARD_TOKEN_META]: cardToken(deps.sealer, intent, caller, user) },
      );
    case "input-required":
      return ask(intent, roundTripState(deps.sealer, intent, call, caller, user));
    case "form":
      return outcome(await askInCall(intent, context, ctx));
  }
}

/**
 * The tool's draft, with the operation it drafted: one of those it declares, and one that acts
 * as the user only when this server has one to act as. Refused before anything is drafted: a
 * human must never approve what the API will refuse.
 */
async function draftOf(
  tool: DraftTool,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<WriteDraft> {
  const user = context.session.delegatedUser;
  const fixed = tool.writes === "offered" ? null : tool.writes;
  const actsAsUser = (id: string) => context.api.routes.get(id)?.capability != null;
  if (fixed?.every(actsAsUser) && !user) throw noDelegatedUser();
  const { operation: chosen, ...drafted } = await tool.draft(args, context);
  const operation = chosen ?? (fixed?.length === 1 ? fixed[0] : undefined);
  const allowed = fixed
    ? fixed.some((id) => id === operation)
    : context.offer.offered.get(operation ?? "")?.kind === "write";
  if (operation === undefined || !allowed)
    throw new Error(
      `${tool.name} drafted ${operation ?? "no operation"}, not one of ${fixed?.join(", ") ?? "the offered writes"}`,
    );
  // A tool that drafts both kinds learns only now whether this write acts as the user.
  if (actsAsUser(operation) && !user) throw noDelegatedUser();
  return { operation, ...drafted };
}

const noDelegatedUser = () =>
  new UserFacingError(
    "This write acts as the user this server works for, and none is configured (PORTFOLIO_DELEGATED_USER_EMAIL or PORTFOLIO_DELEGATED_USER_ID); nothing was drafted.",
  );
