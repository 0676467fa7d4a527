import {
  type CallToolResult,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { neutraliseDeep } from "../neutralise.js";
import { traced } from "../telemetry/tracing.js";
import type { ToolContext } from "../toolkit/definitions.js";
import { cancelDraft, confirmDraft } from "../toolkit/settling.js";
import type { WriteGate } from "../writes/gate.js";
import type { Caller, Channel, Intent } from "../writes/intent.js";
import { type Outcome, outcomeOf } from "../writes/outcome.js";
import { previewText } from "../writes/preview.js";
import { draftOfRoundTrip } from "../writes/round-trip.js";
import type { Sealer } from "../writes/seal.js";

/**
 * The confirmation form: asked inside the call for a 2025 session, or as an input-required
 * round trip for a 2026 client. Only an explicit yes sends, once.
 */

/** Long enough for a person to read the preview and decide. */
const CONFIRMATION_TIMEOUT_MS = 10 * 60_000;

const CONFIRM_FORM = {
  type: "object" as const,
  properties: {
    confirm: {
      type: "boolean" as const,
      title: "Write this",
      description: "Yes sends exactly this request, once. No sends nothing.",
      default: false,
    },
  },
  required: ["confirm"],
};

/** The person's answer: accept sends; decline and cancel (or no answer) send nothing. */
type Answer = "accept" | "decline" | "cancel";

/** The confirmation form as an input request, with the sealed state to come back with. */
export function ask(intent: Intent, requestState: string): InputRequiredResult {
  return inputRequired({
    inputRequests: {
      confirm: inputRequired.elicit({
        message: previewText(intent.preview),
        requestedSchema: CONFIRM_FORM,
      }),
    },
    requestState,
  });
}

/** The second round of an input-required confirmation. Nothing is sent unless all holds. */
export async function answered(
  call: { tool: string; args: Record<string, unknown> },
  sealed: string,
  caller: Caller,
  context: ToolContext,
  ctx: ServerContext,
  deps: { gate: WriteGate; sealer: Sealer },
): Promise<CallToolResult | InputRequiredResult> {
  const user = context.session.delegatedUser;
  const opened = await draftOfRoundTrip(sealed, call, deps, caller, user);
  if ("refused" in opened)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `The confirmation of ${call.tool} cannot be used: ${opened.refused}; nothing was sent. Call ${call.tool} again to draft the write anew.`,
    );
  const { intent } = opened;
  const reply = inputResponse(ctx.mcpReq.inputResponses, "confirm");
  if (reply.kind === "missing")
    return intent.state === "pending" ? ask(intent, sealed) : outcome(outcomeOf(intent));
  const yes =
    reply.kind === "elicit" && reply.action === "accept" && reply.content?.confirm === true;
  // A client that lost the first answer sends the same one again: it hears what became of the
  // write (a yes asks the gate again, which sends nothing twice), never "nothing was sent".
  if (!yes && intent.state !== "pending") return outcome(outcomeOf(intent));
  const declined = reply.kind === "elicit" && reply.action === "decline";
  const answer = yes ? "accept" : declined ? "decline" : "cancel";
  return outcome(await decided(answer, intent, context, "input-required"));
}

/** A 2025 session: the form is asked inside the call, on the call's own stream. */
export async function askInCall(
  intent: Intent,
  context: ToolContext,
  ctx: ServerContext,
): Promise<Outcome> {
  let answer: Answer;
  try {
    // The person's time to decide, as a span of its own in the request's trace.
    const wait = { attributes: { "portfolio.intent.id": intent.id, "portfolio.channel": "form" } };
    answer = await traced("confirmation wait", wait, async (span) => {
      const reply = await ctx.mcpReq.elicitInput(
        { mode: "form", message: previewText(intent.preview), requestedSchema: CONFIRM_FORM },
        { timeout: CONFIRMATION_TIMEOUT_MS },
      );
      const given =
        reply.action !== "accept"
          ? reply.action
          : reply.content?.confirm === true
            ? "accept"
            : "decline";
      span?.set({ "portfolio.answer": given });
      return given;
    });
  } catch (error) {
    // No answer, or a malformed one: that is not a yes.
    context.logger.info({ err: error, intent: intent.id }, "confirmation form not answered");
    answer = "cancel";
  }
  return decided(answer, intent, context, "form");
}

/** What the person's answer in a form does: a yes sends the draft once, anything else drops it. */
async function decided(
  answer: Answer,
  intent: Intent,
  context: ToolContext,
  via: Channel,
): Promise<Outcome> {
  if (answer === "accept")
    return outcomeOf(await confirmDraft(context, intent.confirmationId, via));
  const declined = answer === "decline";
  const done = await cancelDraft(
    context,
    intent.confirmationId,
    via,
    declined ? "declined" : "cancelled",
  );
  return {
    ...outcomeOf(done),
    message: `The user ${declined ? "declined" : "did not confirm"}; nothing was written.`,
  };
}

/**
 * The outcome as a result, neutralised like every result (a delivered write's record is the
 * API's data); `meta` (the card's token) is for the view, never the model.
 */
export function outcome(structured: Outcome, meta?: Record<string, unknown>): CallToolResult {
  const told = neutraliseDeep(structured);
  return {
    content: [{ type: "text", text: JSON.stringify(told) }],
    structuredContent: told as unknown as Record<string, unknown>,
    ...(meta ? { _meta: meta } : {}),
  };
}
