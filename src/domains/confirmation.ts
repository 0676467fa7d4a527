import { z } from "zod";
import { type OperationId, WRITE_OPERATIONS } from "../api/catalogue.js";
import {
  type Domain,
  defineTool,
  type ToolAnnotations,
  type ToolContext,
} from "../toolkit/definitions.js";
import { cancelDraft, confirmDraft, writesOf } from "../toolkit/settling.js";
import { draftOfCard } from "../writes/card.js";
import type { Intent } from "../writes/intent.js";
import { outcomeOf, outcomeSchema } from "../writes/outcome.js";

const confirmationId = z
  .string()
  .min(1)
  .max(300)
  .describe("Exactly as the draft returned it: the write spelled out, then its id in brackets.");

/** Sends a write: the API changes, once (confirming again sends nothing). */
const SENDS: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: true,
};
/** Drops a draft: nothing leaves the server. */
const DROPS: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

const cardToken = z
  .string()
  .min(1)
  .max(2_000)
  .describe("The token of the draft's app_confirmation, exactly as the card received it.");

/**
 * The tools that settle a draft. The two-step pair is the model's, for clients that can show
 * neither a form nor an app: the assistant asks the person, then settles the draft by its
 * spelled-out id. The app pair is the confirmation card's alone (hosts do not offer app-only
 * tools to the model): its buttons call them with the token sealed for the draft it shows.
 */
export const confirmation: Domain = {
  tools: [
    twoStep({
      name: "confirm_write",
      title: "Confirm a drafted write",
      description:
        "Sends a drafted write, exactly as previewed, once. Call it only after the user has seen that preview and said yes; never on your own initiative. Confirming again returns the recorded result.",
      annotations: SENDS,
      operations: WRITE_OPERATIONS,
      settle: (id, ctx) => confirmDraft(ctx, id, "two-step"),
    }),
    twoStep({
      name: "cancel_write",
      title: "Cancel a drafted write",
      description: "Drops a drafted write that was not confirmed; nothing is sent.",
      annotations: DROPS,
      operations: [],
      settle: (id, ctx) => cancelDraft(ctx, id, "two-step"),
    }),
    cardButton({
      name: "app_confirm_write",
      title: "Confirm (card)",
      description:
        "The Confirm button of the confirmation card: sends the draft the card shows, exactly as previewed, once.",
      annotations: SENDS,
      operations: WRITE_OPERATIONS,
      press: (intent, ctx) => confirmDraft(ctx, intent.confirmationId, "card"),
    }),
    cardButton({
      name: "app_cancel_write",
      title: "Cancel (card)",
      description: "The Cancel button of the confirmation card: drops the draft; nothing is sent.",
      annotations: DROPS,
      operations: [],
      press: (intent, ctx) => cancelDraft(ctx, intent.confirmationId, "card"),
    }),
  ],
};

/** What a settling tool says of itself: the rest follows from how it settles. */
interface Settling {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  operations: readonly OperationId[];
}

/** A tool of the model's two-step pair: it acts on the draft whose spelled-out id it is given. */
function twoStep(tool: Settling & { settle(id: string, ctx: ToolContext): Promise<Intent> }) {
  return defineTool({
    kind: "run",
    name: tool.name,
    title: tool.title,
    description: tool.description,
    family: "confirmation",
    annotations: tool.annotations,
    operations: tool.operations,
    settles: "two-step",
    output: outcomeSchema,
    input: z.strictObject({ confirmation_id: confirmationId }),
    run: async ({ confirmation_id }, ctx) => ({
      structured: outcomeOf(await tool.settle(confirmation_id, ctx)),
    }),
  });
}

/** A button of the confirmation card: it acts only on the draft its sealed token names. */
function cardButton(
  button: Settling & { press(intent: Intent, ctx: ToolContext): Promise<Intent> },
) {
  return defineTool({
    kind: "run",
    name: button.name,
    title: button.title,
    description: button.description,
    family: "confirmation",
    annotations: button.annotations,
    operations: button.operations,
    settles: "app",
    view: "confirm-write",
    output: outcomeSchema,
    input: z.strictObject({ token: cardToken }),
    async run({ token }, ctx) {
      const writes = writesOf(ctx);
      const intent = await draftOfCard(token, writes, writes.caller, ctx.session.delegatedUser);
      return { structured: outcomeOf(await button.press(intent, ctx)) };
    },
  });
}
