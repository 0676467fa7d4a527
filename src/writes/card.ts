import { UserFacingError } from "../errors.js";
import { describeUser, type WriteGate } from "./gate.js";
import type { Caller, Intent } from "./intent.js";
import { SealError, type Sealer } from "./seal.js";

/**
 * The binding between a confirmation card and the one draft it shows: a sealed token naming the
 * intent, the user and client it was drafted for, and its expiry. The card's Confirm button
 * passes it back to app_confirm_write; nothing else can stand in for it, and it answers once.
 */

/** Marks a card's token, so the state of an input-required round trip cannot pose as one. */
const CARD = "app-card";

/**
 * Where a draft's result carries the card's token: its `_meta`, which hosts hand to the view
 * and not to the model (never `content` or `structuredContent`, which some hosts show it).
 */
export const CARD_TOKEN_META = "portfolio-mcp/app_confirmation";

export function cardToken(
  sealer: Sealer,
  intent: Intent,
  caller: Caller,
  user: Parameters<typeof describeUser>[0],
): { token: string } {
  return {
    token: sealer.seal({
      intent: intent.id,
      tool: CARD,
      args: intent.id,
      user: describeUser(user),
      client: caller.client,
      expires: Date.parse(intent.expiresAt),
    }),
  };
}

/**
 * The draft a card's token names, if the token holds for this caller; otherwise one sentence
 * saying why, and nothing is sent. An answered draft is returned as it is: pressing again only
 * reports what became of it (or resends, with the same key, what is uncertain).
 */
export async function draftOfCard(
  token: string,
  deps: { sealer: Sealer; gate: WriteGate },
  caller: Caller,
  user: Parameters<typeof describeUser>[0],
): Promise<Intent> {
  const refuse = (why: string) =>
    new UserFacingError(
      `This confirmation cannot be used: ${why}; nothing was sent. Ask the assistant to draft the write again.`,
    );
  let state: ReturnType<Sealer["open"]>;
  try {
    state = deps.sealer.open(token);
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    throw refuse(
      error.message === "it has expired" ? "the draft has expired" : `the token ${error.message}`,
    );
  }
  if (state.tool !== CARD || state.args !== state.intent)
    throw refuse("it is not a confirmation card's token");
  if (state.user !== describeUser(user) || state.client !== caller.client)
    throw refuse("it was issued to another user or client");
  const intent = await deps.gate.find(state.intent);
  if (!intent) throw refuse("its draft no longer exists (drafts are removed once they expire)");
  return intent;
}
