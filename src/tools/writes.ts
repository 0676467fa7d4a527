import { z } from "zod";
import { CATALOGUE, type OperationId } from "../api/catalogue.js";
import { asListPage } from "../api/response.js";
import { normaliseViewName, VIEW_TYPES, type ViewType, viewStateIssues } from "../api/schemas.js";
import { fieldPath } from "../field-errors.js";
import { quote } from "../writes/display.js";
import type { WriteDraft } from "../writes/gate.js";
import type { Intent } from "../writes/intent.js";
import { previewText } from "../writes/preview.js";
import { invalidArguments, sentence, UserFacingError } from "./errors.js";
import { record } from "./present.js";
import {
  defineTool,
  type ToolAnnotations,
  type ToolContext,
  type ToolDefinition,
} from "./types.js";

const q = CATALOGUE;

/**
 * What every write call answers. Kept loose in the listing (28 tools share the context
 * budget): the status values and fields are told by the descriptions and the message.
 */
const outcomeSchema = z.object({
  status: z.string().describe("awaiting_confirmation, succeeded, uncertain or cancelled"),
  confirmation_id: z.string(),
  preview: z.record(z.string(), z.unknown()),
  expires_at: z.string().optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  message: z.string(),
});

type Outcome = z.output<typeof outcomeSchema> & {
  status: "awaiting_confirmation" | "succeeded" | "uncertain" | "cancelled";
};

const confirmationId = z
  .string()
  .min(1)
  .max(300)
  .describe("Exactly as the draft returned it: the write spelled out, then its id in brackets.");

/** The hints of a write that adds something new; each call drafts a new, separate write. */
const CREATES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};

const TWO_STEP_NOTE =
  "Nothing has been written. Show the user this preview; call confirm_write with this confirmation_id, exactly as given, only once they have agreed to it, or cancel_write.";

/** What a write call answers, from the state its intent is in. */
export function outcomeOf(intent: Intent): Outcome {
  const base = {
    confirmation_id: intent.confirmationId ?? intent.id,
    preview: { ...intent.preview },
  };
  switch (intent.state) {
    case "pending":
      return {
        ...base,
        status: "awaiting_confirmation",
        expires_at: intent.expiresAt,
        message: TWO_STEP_NOTE,
      };
    case "succeeded":
      return {
        ...base,
        status: "succeeded",
        result: record(intent.result),
        message: "Written, once. Confirming again returns this same result and sends nothing.",
      };
    case "uncertain":
    case "sending":
      return {
        ...base,
        status: "uncertain",
        message: `The API did not confirm the write (${intent.error?.code ?? "no answer"}); it may or may not be applied. Call confirm_write again: it resends the same request with the same Idempotency-Key, so it cannot be applied twice.`,
      };
    case "cancelled":
    case "expired":
      return { ...base, status: "cancelled", message: "Nothing was written." };
    case "failed":
      throw new UserFacingError(
        `${sentence(intent.error?.message ?? "The Partner API refused the write")} Nothing was written.`,
      );
  }
}

/**
 * Runs a drafted write through the gate: asked inside the call when the client can show a
 * form and the mode allows it, otherwise parked for confirm_write.
 */
async function supervise(
  operation: OperationId,
  build: () => Promise<Omit<WriteDraft, "operation">>,
  ctx: ToolContext,
): Promise<{ structured: Outcome }> {
  const writes = ctx.writes;
  if (!writes) throw new UserFacingError("This server is read-only; nothing can be written.");
  if (writes.mode === "elicitation" && !writes.ask) {
    throw new UserFacingError(
      "This server confirms writes inside the client (PORTFOLIO_CONFIRM=elicitation), and this client cannot show a confirmation form; nothing was drafted.",
    );
  }
  // Refused before anything is drafted: a human must never approve what the API will refuse.
  if (CATALOGUE[operation].capability !== null && !ctx.session.delegatedUser) {
    throw new UserFacingError(
      "This write acts as the user this server works for, and none is configured (PORTFOLIO_DELEGATED_USER_EMAIL or PORTFOLIO_DELEGATED_USER_ID); nothing was drafted.",
    );
  }
  const draft = { operation, ...(await build()) };
  const user = ctx.session.delegatedUser;
  const intent = await writes.gate.propose(draft, writes.caller, user);
  if (writes.mode === "two-step" || !writes.ask) return { structured: outcomeOf(intent) };

  let answer: "accept" | "decline" | "cancel";
  try {
    answer = await writes.ask(previewText(intent.preview));
  } catch (error) {
    ctx.logger.warn({ err: error, intent: intent.id }, "confirmation form failed");
    answer = "cancel";
  }
  if (answer !== "accept") {
    const cancelled = await writes.gate.cancel(intent.confirmationId, writes.caller, user);
    return {
      structured: {
        ...outcomeOf(cancelled),
        message: `The user ${answer === "decline" ? "declined" : "did not confirm"}; nothing was written.`,
      },
    };
  }
  return {
    structured: outcomeOf(await writes.gate.confirm(intent.confirmationId, writes.caller, user)),
  };
}

/** Only the fields the caller gave: absent and null differ in a mutation (spec part 2). */
const given = (args: Record<string, unknown>, names: string[]) =>
  Object.fromEntries(Object.entries(args).filter(([k, v]) => names.includes(k) && v !== undefined));

async function read(
  ctx: ToolContext,
  id: Parameters<ToolContext["api"]["call"]>[0],
  input: object,
) {
  return (
    await ctx.api.call(id, input as never, {
      signal: ctx.signal,
      delegatedUser: ctx.session.delegatedUser,
    })
  ).data;
}

const noteFields = Object.keys(q.operation_note_create.body.shape);
const dashboardFields = Object.keys(q.custom_dashboard_create.body.shape);
const viewFields = ["name", "type", "filters", "columns", "sort", "icon", "color", "is_default"];

export const WRITE_TOOLS: readonly ToolDefinition[] = [
  defineTool({
    name: "create_operation_note",
    title: "Create a follow-up note",
    description:
      "Drafts a follow-up note on an operation. Nothing is written until the user confirms this exact note. Give content (or text); note_type is reporting, call, comite, risque or libre.",
    annotations: CREATES,
    output: outcomeSchema,
    input: z
      .strictObject({
        operation_id: q.operation_note_create.params.shape.operation_id,
        ...q.operation_note_create.body.shape,
      })
      .refine((a) => a.content != null || a.text != null, {
        path: ["content"],
        message: "is required when text is absent (a note needs content or text)",
      }),
    run: (args, ctx) =>
      supervise(
        "operation_note_create",
        async () => {
          const operation = record(
            await read(ctx, "operation_get", { path: { operation_id: args.operation_id } }),
          );
          const name = typeof operation.name === "string" ? operation.name : args.operation_id;
          const body = given(args, noteFields);
          return {
            path: { operation_id: args.operation_id },
            body,
            excerpt: args.content ?? args.text ?? undefined,
            preview: {
              action: "Create a follow-up note",
              target: `operation ${quote(name, 200)} (${args.operation_id})`,
              fields: body,
              billable: false,
            },
          };
        },
        ctx,
      ),
  }),
  defineTool({
    name: "create_custom_dashboard",
    title: "Create a custom dashboard",
    description:
      "Drafts a custom dashboard for the user this server acts for. Nothing is written until the user confirms it.",
    annotations: CREATES,
    output: outcomeSchema,
    input: q.custom_dashboard_create.body,
    run: (args, ctx) =>
      supervise(
        "custom_dashboard_create",
        async () => {
          const body = given(args, dashboardFields);
          return {
            path: {},
            body,
            preview: {
              action: "Create a custom dashboard",
              target: `dashboard ${quote(args.name, 200)}`,
              fields: body,
              billable: false,
            },
          };
        },
        ctx,
      ),
  }),
  defineTool({
    name: "create_saved_view",
    title: "Create a saved view",
    description:
      "Drafts a saved view (filters, columns, sort) for the user this server acts for. Operations views take statut, not status. Nothing is written until the user confirms it.",
    annotations: CREATES,
    output: outcomeSchema,
    input: q.saved_view_create.body,
    run: (args, ctx) =>
      supervise(
        "saved_view_create",
        async () => {
          const body = given(args, viewFields);
          return {
            path: {},
            body,
            preview: {
              action: "Create a saved view",
              target: `${args.type} view ${quote(normaliseViewName(args.name), 200)}`,
              fields: body,
              billable: false,
            },
          };
        },
        ctx,
      ),
  }),
  defineTool({
    name: "update_saved_view",
    title: "Update a saved view",
    description:
      "Drafts a change to one of the user's saved views: only the fields given change; null clears icon or color. Nothing is written until the user confirms it.",
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: true,
    },
    output: outcomeSchema,
    input: z
      .strictObject({
        view_id: q.saved_view_update.params.shape.view_id,
        ...savedViewUpdateShape(),
      })
      .refine((a) => Object.keys(a).some((k) => k !== "view_id"), {
        path: ["view_id"],
        message: "needs at least one field to change beside it",
      }),
    run: (args, ctx) =>
      supervise(
        "saved_view_update",
        async () => {
          const views = asListPage(await read(ctx, "saved_views_list", {})).items.map(record);
          const current = views.find(
            (v) => String(v.id).toLowerCase() === args.view_id.toLowerCase(),
          );
          if (!current)
            throw new UserFacingError(
              `The user has no saved view ${args.view_id}; nothing was drafted.`,
            );
          const body = given(args, viewFields);
          checkAgainstStoredType(args, current.type);
          return {
            path: { view_id: args.view_id },
            body,
            preview: {
              action: "Update a saved view",
              target: `view ${quote(String(current.name), 200)} (${args.view_id})`,
              fields: body,
              billable: false,
            },
          };
        },
        ctx,
      ),
  }),
  defineTool({
    name: "create_workflow_from_recommendation",
    title: "Create a workflow from a recommendation",
    description:
      "Drafts a workflow from a validated recommendation (see preview_workflow_recommendations). Nothing is created until the user confirms it.",
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    },
    output: outcomeSchema,
    input: z.strictObject({
      recommendation_id: q.workflow_create_from_recommendation.params.shape.recommendation_id,
      ...q.workflow_create_from_recommendation.body.unwrap().shape,
    }),
    run: (args, ctx) =>
      supervise(
        "workflow_create_from_recommendation",
        async () => {
          const recommendations = asListPage(
            await read(ctx, "workflow_recommendations_preview", {
              body: { include_applied: true, limit: 50 },
            }),
          ).items.map(record);
          const rec = recommendations.find((r) => r.id === args.recommendation_id);
          if (!rec)
            throw new UserFacingError(
              `No recommendation ${args.recommendation_id}; nothing was drafted.`,
            );
          const body = given(args, ["name", "enabled"]);
          return {
            path: { recommendation_id: args.recommendation_id },
            body: Object.keys(body).length > 0 ? body : undefined,
            preview: {
              action: "Create a workflow",
              target: `from recommendation ${quote(String(rec.title ?? rec.id), 200)} (${args.recommendation_id})`,
              fields: body,
              billable: false,
            },
          };
        },
        ctx,
      ),
  }),
  defineTool({
    name: "resolve_siren",
    title: "Resolve a SIREN (billable)",
    description:
      "Drafts an explicit resolution of a SIREN with the external provider. BILLABLE: each resolution is charged. Try lookup_siren first (free). Nothing is sent until the user confirms.",
    annotations: CREATES,
    output: outcomeSchema,
    input: z.strictObject({
      siren: q.siren_resolve.params.shape.siren.refine(
        luhnValid,
        "must pass the SIREN checksum (Luhn)",
      ),
    }),
    run: (args, ctx) =>
      supervise(
        "siren_resolve",
        async () => ({
          path: { siren: args.siren },
          body: undefined,
          preview: {
            action: "Resolve a SIREN with the external provider",
            target: `SIREN ${args.siren}`,
            fields: {},
            billable: true,
          },
        }),
        ctx,
      ),
  }),
  defineTool({
    name: "confirm_write",
    title: "Confirm a drafted write",
    description:
      "Sends a drafted write, exactly as previewed, once. Call it only after the user has seen that preview and said yes; never on your own initiative. Confirming again returns the recorded result.",
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: true,
    },
    output: outcomeSchema,
    input: z.strictObject({ confirmation_id: confirmationId }),
    async run({ confirmation_id }, ctx) {
      const writes = required(ctx);
      return {
        structured: outcomeOf(
          await writes.gate.confirm(confirmation_id, writes.caller, ctx.session.delegatedUser),
        ),
      };
    },
  }),
  defineTool({
    name: "cancel_write",
    title: "Cancel a drafted write",
    description: "Drops a drafted write that was not confirmed; nothing is sent.",
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    output: outcomeSchema,
    input: z.strictObject({ confirmation_id: confirmationId }),
    async run({ confirmation_id }, ctx) {
      const writes = required(ctx);
      return {
        structured: outcomeOf(
          await writes.gate.cancel(confirmation_id, writes.caller, ctx.session.delegatedUser),
        ),
      };
    },
  }),
];

function savedViewUpdateShape() {
  return q.saved_view_update.body.shape;
}

/**
 * Updates stay bound to the stored view's type (spec part 2): the type cannot change, and the
 * filters, columns and sort given must be the stored type's.
 */
function checkAgainstStoredType(
  args: { type?: string } & Record<string, unknown>,
  stored: unknown,
) {
  if (!(VIEW_TYPES as readonly unknown[]).includes(stored)) return; // the API will judge
  const type = stored as ViewType;
  const errors = viewStateIssues({ ...(args as object), type }).map((issue) => ({
    field: fieldPath(issue.path),
    rule: "view type",
    message: issue.message,
  }));
  if (args.type !== undefined && args.type !== type)
    errors.unshift({
      field: "type",
      rule: "stored type",
      message: `must stay ${type}: a view keeps the type it was created with`,
    });
  if (errors.length > 0)
    throw new UserFacingError(invalidArguments("update_saved_view", errors, "drafted"));
}

function required(ctx: ToolContext) {
  if (!ctx.writes) throw new UserFacingError("This server is read-only; nothing can be written.");
  return ctx.writes;
}

/** The SIREN check digit (Luhn), checked here so that a typo is never billed. */
function luhnValid(siren: string): boolean {
  let sum = 0;
  for (let i = 0; i < siren.length; i++) {
    let digit = Number(siren[siren.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}
