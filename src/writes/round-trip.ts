import type { DelegatedUser } from "../config.js";
import { describeUser } from "./describe-user.js";
import type { WriteGate } from "./gate.js";
import { type Caller, canonicalDigest, type Intent } from "./intent.js";
import { SealError, type Sealer } from "./seal.js";

/**
 * The binding between an input-required round trip (a 2026 client's confirmation form) and
 * the one draft it asks about: the state sealed into the first answer names the intent, the
 * tool and a digest of its arguments, the user and client it was drafted for, and its expiry.
 * The retry carrying it back must be the same call by the same caller, or nothing is sent.
 */

/** A call: the draft tool's name and its arguments. */
interface Call {
  tool: string;
  args: Record<string, unknown>;
}

/** The state a round trip's first answer carries, sealed: only this server can open it. */
export function roundTripState(
  sealer: Sealer,
  intent: Intent,
  call: Call,
  caller: Caller,
  user: DelegatedUser | null,
): string {
  return sealer.seal({
    intent: intent.id,
    tool: call.tool,
    args: canonicalDigest(call.args),
    user: describeUser(user),
    client: caller.client,
    expires: Date.parse(intent.expiresAt),
  });
}

/** The draft a retry's sealed state names, when the state holds for this call; else why not. */
export async function draftOfRoundTrip(
  sealed: string,
  call: Call,
  deps: { sealer: Sealer; gate: WriteGate },
  caller: Caller,
  user: DelegatedUser | null,
): Promise<{ intent: Intent } | { refused: string }> {
  let state: ReturnType<Sealer["open"]>;
  try {
    state = deps.sealer.open(sealed);
  } catch (error) {
    if (error instanceof SealError) return { refused: error.message };
    throw error;
  }
  if (state.tool !== call.tool) return { refused: `it was issued for ${state.tool}` };
  if (state.user !== describeUser(user) || state.client !== caller.client)
    return { refused: "it was issued to another user or client" };
  if (state.args !== canonicalDigest(call.args))
    return { refused: "the arguments differ from those of the write the person was shown" };
  const intent = await deps.gate.find(state.intent);
  if (!intent)
    return { refused: "its draft no longer exists (drafts are removed once they expire)" };
  return { intent };
}
