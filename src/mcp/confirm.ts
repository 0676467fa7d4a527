import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { rendersApps } from "../apps/catalog.js";
import { type ConfirmMode, confirmWays } from "../config.js";
import { UserFacingError } from "../errors.js";
import { neutraliseDeep } from "../neutralise.js";
import { traced } from "../telemetry/tracing.js";
import type { DraftTool, ToolContext } from "../toolkit/definitions.js";
import { settled } from "../toolkit/refusals.js";
import { CARD_TOKEN_META, cardToken } from "../writes/card.js";
import { describeUser, type WriteGate } from "../writes/gate.js";
import { type Caller, type Channel, canonicalDigest, type Intent } from "../writes/intent.js";
import { type Outcome, outcomeOf } from "../writes/outcome.js";
import { previewText } from "../writes/preview.js";
import { SealError, type Sealer } from "../writes/seal.js";

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

export interface ConfirmationDeps {
  gate: WriteGate;
  mode: ConfirmMode;
  sealer: Sealer;
  /** Who is calling, for binding intents: the client identity and session. */
  caller(ctx: ServerContext): Caller;
}

/**
 * How a person confirms this call (DESIGN decision 5): in a form inside the call for a 2025
 * session, in an input-required round trip for a 2026 client, in an MCP Apps card whose
 * buttons the model cannot press, or with confirm_write where the client has none of these.
 * The first way PORTFOLIO_CONFIRM allows that the client supports is used. The protocol only
 * carries the question; the gate decides what is sent, and only by the channel it recorded.
 */
export type { Channel };

/**
 * What the client can do: a 2026 request says it in its envelope; a 2025 client said it at
 * initialize, on a connection that can carry our questions (a stateless 2025 request has none,
 * so it gets what needs no capability).
 */
export function clientCapabilities(
  server: Server,
  ctx: ServerContext,
): ClientCapabilities | undefined {
  return ctx.mcpReq.envelope !== undefined
    ? ((ctx.mcpReq.envelope as Record<string, unknown>)[CLIENT_CAPABILITIES_META_KEY] as
        | ClientCapabilities
        | undefined)
    : server.getClientCapabilities();
}

export function channelFor(server: Server, ctx: ServerContext, mode: ConfirmMode): Channel | null {
  const modern = ctx.mcpReq.envelope !== undefined;
  const capabilities = clientCapabilities(server, ctx);
  const elicitation = capabilities?.elicitation;
  // A bare `elicitation: {}` means form elicitation (specification, client capabilities).
  const canAsk =
    elicitation !== undefined &&
    (elicitation.form !== undefined || Object.keys(elicitation).length === 0);
  for (const way of confirmWays(mode)) {
    if (way === "form" && canAsk) return modern ? "input-required" : "form";
    if (way === "app" && rendersApps(capabilities)) return "card";
    if (way === "two-step") return "two-step";
  }
  return null;
}

/** Whether the client renders MCP Apps (views, and the card where writes may use it). */
export const showsApps = (server: Server, ctx: ServerContext) =>
  rendersApps(clientCapabilities(server, ctx));

/** Whether PORTFOLIO_CONFIRM lets any client confirm in the card. */
export const cardsAllowed = (deps: ConfirmationDeps | null) =>
  deps !== null && confirmWays(deps.mode).includes("app");

/**
 * Which confirmation tools a client is offered: the card's when it confirms in the card; the
 * two-step pair when PORTFOLIO_CONFIRM allows two-step (to a client that confirms in a form,
 * only to ask again about a write already confirmed); none otherwise.
 */
export const settlingWay = (
  channel: Channel | null,
  mode: ConfirmMode | null,
): "app" | "two-step" | null => {
  if (channel === "card") return "app";
  return mode !== null && confirmWays(mode).includes("two-step") ? "two-step" : null;
};

const WAY_WORDS = { form: "a confirmation form", app: "an MCP Apps card", "two-step": "" };

/** Why nothing can be drafted for this client: the ways allowed, and that it has none. */
function noWayToConfirm(mode: ConfirmMode): UserFacingError {
  const ways = confirmWays(mode).filter((w) => w !== "two-step");
  const setting = typeof mode === "string" ? mode : mode.join(",");
  if (ways.length === 1 && ways[0] === "form")
    return new UserFacingError(
      `This server confirms writes inside the client (PORTFOLIO_CONFIRM=${setting}), and this client cannot show a confirmation form; nothing was drafted.`,
    );
  const shown = ways.map((w) => WAY_WORDS[w]).join(" or ");
  return new UserFacingError(
    `This server confirms writes only in ${shown} (PORTFOLIO_CONFIRM=${setting}), and this client can show ${ways.length > 1 ? "neither" : "none"}; nothing was drafted.`,
  );
}

const CARD_NOTE =
  "Nothing has been written. The user confirms or cancels in the card shown with this result; do not ask them to confirm in the chat, and do not say it was written until the card reports it.";

/**
 * A draft tool's call: the first round drafts and asks; an input-required retry carries the
 * sealed state and the person's answer, and only an explicit yes sends, once.
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
  const sealed = ctx.mcpReq.envelope !== undefined ? ctx.mcpReq.requestState() : undefined;
  if (typeof sealed === "string") return answered(tool, args, sealed, caller, context, ctx, deps);

  const channel = channelFor(server, ctx, deps.mode);
  if (channel === null) throw noWayToConfirm(deps.mode);
  const fixed = tool.writes === "offered" ? null : tool.writes;
  const actsAsUser = (id: string) => context.api.routes.get(id)?.capability != null;
  // Refused before anything is drafted: a human must never approve what the API will refuse.
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
  const intent = await deps.gate.propose({ operation, ...drafted }, caller, user, channel);
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
      return ask(
        intent,
        deps.sealer.seal({
          intent: intent.id,
          tool: tool.name,
          args: canonicalDigest(args),
          user: describeUser(user),
          client: caller.client,
          expires: Date.parse(intent.expiresAt),
        }),
      );
    case "form":
      return outcome(await askInCall(intent, caller, context, ctx, deps));
  }
}

const noDelegatedUser = () =>
  new UserFacingError(
    "This write acts as the user this server works for, and none is configured (PORTFOLIO_DELEGATED_USER_EMAIL or PORTFOLIO_DELEGATED_USER_ID); nothing was drafted.",
  );

/** The second round of an input-required confirmation. Nothing is sent unless all holds. */
async function answered(
  tool: DraftTool,
  args: Record<string, unknown>,
  sealed: string,
  caller: Caller,
  context: ToolContext,
  ctx: ServerContext,
  deps: ConfirmationDeps,
): Promise<CallToolResult | InputRequiredResult> {
  const refuse = (why: string) =>
    new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `The confirmation of ${tool.name} cannot be used: ${why}; nothing was sent. Call ${tool.name} again to draft the write anew.`,
    );
  let state: ReturnType<Sealer["open"]>;
  try {
    state = deps.sealer.open(sealed);
  } catch (error) {
    if (error instanceof SealError) throw refuse(error.message);
    throw error;
  }
  const user = context.session.delegatedUser;
  if (state.tool !== tool.name) throw refuse(`it was issued for ${state.tool}`);
  if (state.user !== describeUser(user) || state.client !== caller.client)
    throw refuse("it was issued to another user or client");
  if (state.args !== canonicalDigest(args))
    throw refuse("the arguments differ from those of the write the person was shown");
  const intent = await deps.gate.find(state.intent);
  if (!intent) throw refuse("its draft no longer exists (drafts are removed once they expire)");

  const reply = inputResponse(ctx.mcpReq.inputResponses, "confirm");
  if (reply.kind === "missing")
    return intent.state === "pending" ? ask(intent, sealed) : outcome(outcomeOf(intent));
  const yes =
    reply.kind === "elicit" && reply.action === "accept" && reply.content?.confirm === true;
  // A client that lost the first answer sends the same one again: it hears what became of the
  // write (a yes asks the gate again, which sends nothing twice), never "nothing was sent".
  if (yes || intent.state !== "pending")
    return outcome(
      outcomeOf(
        yes
          ? await settled(
              context,
              await deps.gate.confirm(intent.confirmationId, caller, user, "input-required"),
            )
          : intent,
      ),
    );
  const declined = reply.kind === "elicit" && reply.action === "decline";
  return outcome(await cancelled(intent, caller, context, deps, declined, "input-required"));
}

/** The confirmation form as an input request, with the sealed state to come back with. */
function ask(intent: Intent, requestState: string): InputRequiredResult {
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

/** A 2025 session: the form is asked inside the call, on the call's own stream. */
async function askInCall(
  intent: Intent,
  caller: Caller,
  context: ToolContext,
  ctx: ServerContext,
  deps: ConfirmationDeps,
): Promise<Outcome> {
  const user = context.session.delegatedUser;
  let answer: "accept" | "decline" | "cancel";
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
  if (answer === "accept")
    return outcomeOf(
      await settled(context, await deps.gate.confirm(intent.confirmationId, caller, user, "form")),
    );
  return cancelled(intent, caller, context, deps, answer === "decline", "form");
}

async function cancelled(
  intent: Intent,
  caller: Caller,
  context: ToolContext,
  deps: ConfirmationDeps,
  declined: boolean,
  via: Channel,
): Promise<Outcome> {
  const done = await deps.gate.cancel(
    intent.confirmationId,
    caller,
    context.session.delegatedUser,
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
function outcome(structured: Outcome, meta?: Record<string, unknown>): CallToolResult {
  const told = neutraliseDeep(structured);
  return {
    content: [{ type: "text", text: JSON.stringify(told) }],
    structuredContent: told as unknown as Record<string, unknown>,
    ...(meta ? { _meta: meta } : {}),
  };
}
