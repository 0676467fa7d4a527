import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { rendersApps } from "../apps/catalog.js";
import { type ConfirmMode, confirmWays } from "../config.js";
import { UserFacingError } from "../errors.js";
import type { Channel } from "../writes/intent.js";

/**
 * How a person confirms this call (DESIGN decision 5): in a form inside the call for a 2025
 * session, in an input-required round trip for a 2026 client, in an MCP Apps card whose
 * buttons the model cannot press, or with confirm_write where the client has none of these.
 * The first way PORTFOLIO_CONFIRM allows that the client supports is used. The protocol only
 * carries the question; the gate decides what is sent, and only by the channel it recorded.
 */

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
export const cardsAllowed = (deps: { mode: ConfirmMode } | null) =>
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
export function noWayToConfirm(mode: ConfirmMode): UserFacingError {
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
