import { randomUUID } from "node:crypto";
import { describeIssue, type FieldError } from "@portfolio-mcp/field-errors";
import { z } from "zod";
import type { Operation } from "../api/catalogue.js";
import type { ApiResult } from "../api/client.js";
import { closest, editDistance } from "../closest.js";
import { invalidArguments, UserFacingError, userMessage } from "../errors.js";
import { EXCHANGE_OPERATION } from "../http/attempts.js";
import { ApiError } from "../http/errors.js";
import {
  type Domain,
  type DraftTool,
  defineTool,
  type ToolContext,
  type ToolDraft,
} from "../toolkit/definitions.js";
import { jsonObject, jsonText } from "../toolkit/json-text.js";
import { onlyTheApiKnew } from "../toolkit/refusals.js";
import { firstWords } from "../writes/display.js";
import { outcomeSchema } from "../writes/outcome.js";
import { type InputSignature, REQUEST_ID, searchableOf, signatureOf } from "./describe.js";
import { longTailPreview } from "./preview.js";
import { OperationIndex } from "./search.js";
import { type ReadAnswer, shapeAnswer } from "./shape.js";

/**
 * The rest of the key's contract, in three tools rather than one per operation: a search that
 * returns what is needed to call an operation, a generic read and a generic draft. They reach
 * exactly what the caller is offered (ctx.offer), through the same validation, budget, gate and
 * confirmation as the curated tools.
 */

const MAX_RESULTS = 5;
/** Path, query and body as JSON text: their shape is the operation's, which no listing can say. */
const callInput = {
  operation: z.string().min(1).max(128).describe("An id from find_api_operations."),
  path: jsonText(jsonObject, "JSON object of path parameters.").optional(),
  query: jsonText(jsonObject, "JSON object of query parameters.").optional(),
  body: jsonText(jsonObject, "JSON body (multipart: its fields).", 2_200_000).optional(),
};

const indexes = new WeakMap<object, OperationIndex>();

/**
 * The operations a search looks through: those offered, and those the key's contract has but
 * this deployment hides (hidden is not absent: they are found, marked "not offered here" with
 * the reason and the setting, so the model tells the user rather than substitutes another).
 */
function indexFor(ctx: ToolContext): OperationIndex {
  let index = indexes.get(ctx.offer);
  if (!index) {
    index = new OperationIndex([...ctx.offer.routes.values()].map(searchableOf));
    indexes.set(ctx.offer, index);
  }
  return index;
}

/** What a read that creates something makes: "an export request" (rgpd_export_create, 202). */
function creation(op: Operation): string | null {
  const status = op.contract?.creates;
  if (!status || op.kind !== "read") return null;
  const what = /([a-z]+)_create$/.exec(op.id)?.[1] ?? "new";
  const noun = `${what} ${status === 202 ? "request" : "record"}`;
  return `creates ${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun}: run it only to make one`;
}

const found = z.object({
  id: z.string(),
  kind: z.enum(["read", "write"]),
  family: z.string(),
  scope: z.string(),
  use: z.string(),
  input: z.object({
    path: z.string().optional(),
    query: z.string().optional(),
    body: z.string().optional(),
  }),
  tool: z.string().optional(),
  refused: z.string().optional(),
  not_offered: z
    .string()
    .optional()
    .describe("Why this server does not offer it, and the setting that would."),
});

const findApiOperations = defineTool({
  kind: "run",
  name: "find_api_operations",
  title: "Find API operations",
  description:
    "Finds API operations by what the user wants done (French or English): up to 5, each with its id, kind, input (* required) and the tool to use (call_api_read, draft_api_write or a curated one).",
  family: "api",
  annotations: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  operations: [],
  reach: "any",
  input: z.strictObject({
    query: z.string().min(2).max(300),
    family: z.string().max(64).optional(),
    kind: z.enum(["read", "write"]).optional(),
  }),
  output: z.object({
    operations: z.array(found),
    families: z.array(z.string()).optional(),
    note: z.string().optional(),
  }),
  async run({ query, family, kind }, ctx) {
    const families = [...new Set([...ctx.offer.routes.values()].map((op) => op.family))];
    if (family !== undefined && !families.includes(family)) {
      const near = closest(family, families);
      throw new UserFacingError(
        `No family ${family} is offered${near ? `; did you mean ${near}?` : ""} Families: ${families.join(", ")}.`,
      );
    }
    const refused = ctx.refusals.of(ctx.session);
    const hits = indexFor(ctx).search(query, { family, kind, limit: MAX_RESULTS });
    const operations = hits.map(({ id }) => {
      const op = ctx.offer.routes.get(id) as Operation;
      const hidden = ctx.offer.hidden.get(id);
      const tool = hidden ? null : ctx.toolFor(id);
      const why = refused.get(id);
      const creates = creation(op);
      return {
        id,
        kind: op.kind,
        family: op.family,
        scope: op.scope,
        use: creates ? `${op.summary} (${creates})` : op.summary,
        input: signatureOf(op),
        ...(tool ? { tool } : {}),
        ...(why ? { refused: why } : {}),
        ...(hidden ? { not_offered: hidden } : {}),
      };
    });
    if (operations.length === 0)
      return {
        structured: {
          operations,
          families,
          note: "No operation matches; rephrase with what should happen, or pick a family.",
        },
      };
    return { structured: { operations }, text: renderFound(operations) };
  },
});

/** One block per operation: the id line, then its input; a fraction of the JSON's size. */
function renderFound(
  operations: Array<{
    id: string;
    kind: string;
    scope: string;
    use: string;
    input: InputSignature;
    tool?: string;
    refused?: string;
    not_offered?: string;
  }>,
): string {
  return operations
    .map((op) => {
      const how = op.not_offered
        ? `not offered here: ${op.not_offered}`
        : op.tool
          ? `use the tool ${op.tool}`
          : op.kind === "read"
            ? "call_api_read"
            : "draft_api_write";
      const lines = [`${op.id} (${op.kind}, ${op.scope}): ${op.use}. → ${how}`];
      for (const place of ["path", "query", "body"] as const)
        if (op.input[place]) lines.push(`  ${place}: ${op.input[place]}`);
      if (op.refused) lines.push(`  refused earlier in this session: ${op.refused}`);
      return lines.join("\n");
    })
    .join("\n");
}

const callApiRead = defineTool({
  kind: "run",
  name: "call_api_read",
  title: "Call an API read",
  description:
    "Runs one read operation by id (from find_api_operations). Pages carry total and next_offset; files come as resources with their text.",
  family: "api",
  annotations: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: true,
  },
  operations: [],
  reach: "read",
  input: z.strictObject(callInput),
  output: z.looseObject({ operation: z.string(), status: z.number() }),
  async run(args, ctx) {
    const op = offered(args.operation, "read", ctx);
    const input = checked(op, args);
    let result: ApiResult;
    try {
      result = await ctx.api.send(op, input, {
        signal: ctx.signal,
        delegatedUser: ctx.session.delegatedUser,
        prevalidated: true, // checked above, and sent as given
      });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // Named by the operation, not by this generic tool: that is what the model must not retry.
      const refusal = new UserFacingError(userMessage(error, op.id));
      remember(ctx, op, error, refusal.message);
      throw refusal;
    }
    return (await shapeAnswer(op, input.path, input.query, result, ctx)) as {
      structured: ReadAnswer;
      text?: string;
    };
  },
});

const draftApiWrite: DraftTool = {
  kind: "draft",
  name: "draft_api_write",
  title: "Draft an API write",
  description:
    "Drafts one write operation by id (from find_api_operations); sent only once the user confirms the preview.",
  family: "api",
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
  operations: [],
  reach: "write",
  writes: "offered",
  input: z.strictObject(callInput),
  output: outcomeSchema,
  async draft(args, ctx): Promise<ToolDraft> {
    const op = offered(String(args.operation), "write", ctx);
    const tool = ctx.toolFor(op.id);
    if (tool)
      throw new UserFacingError(
        `${op.id} has its own tool: use ${tool}, which checks and previews it in full (nothing was drafted).`,
      );
    const input = checked(op, withRequestId(op, args as unknown as CallArgs));
    return {
      operation: op.id,
      path: input.path,
      ...(Object.keys(input.query).length > 0 ? { query: input.query } : {}),
      body: input.body,
      preview: await longTailPreview(op, input, ctx),
      ...(excerptOf(input.body) ? { excerpt: excerptOf(input.body) } : {}),
    };
  },
};

interface CallArgs {
  operation: string;
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: Record<string, unknown>;
}

/** The operation, if this caller is offered it as this kind; otherwise one sentence why not. */
function offered(id: string, kind: "read" | "write", ctx: ToolContext): Operation {
  const op = ctx.offer.offered.get(id);
  if (op?.kind === kind) return op;
  const nothing = kind === "read" ? "nothing was sent" : "nothing was drafted";
  if (op)
    throw new UserFacingError(
      `${id} is a ${op.kind}: ${op.kind === "read" ? "call it with call_api_read" : "draft it with draft_api_write"} (${nothing}).`,
    );
  const hidden = ctx.offer.hidden.get(id);
  if (hidden) throw new UserFacingError(`${id} is not offered here: ${hidden} (${nothing}).`);
  // A near miss of a hidden operation is answered as the operation itself: the model must tell
  // the user what is not offered and why, not be pointed at another operation.
  // A slip (two edits at most) of an offered id is that id; anything further that is nearer a
  // hidden one than not is that one, so no offered operation is suggested in its place.
  const near = closest(id, ctx.offer.offered.keys());
  const slip = near !== null && editDistance(id.toLowerCase(), near.toLowerCase()) <= 2;
  const nearest = slip ? null : closest(id, ctx.offer.hidden.keys());
  const nearHidden = nearest ? ctx.offer.hidden.get(nearest) : undefined;
  if (nearest && nearHidden)
    throw new UserFacingError(`${nearest} is not offered here: ${nearHidden} (${nothing}).`);
  // The contract lists the token exchange, but the routes leave it out: saying it has no such
  // operation would be false, and a model would look for a near one.
  if (id === EXCHANGE_OPERATION)
    throw new UserFacingError(
      `${id} is the token exchange: the server signs in by itself when a call needs it, and no tool calls it (${nothing}).`,
    );
  throw new UserFacingError(
    `The API key's contract has no operation ${id}${near ? `; did you mean ${near}?` : "; find_api_operations lists them"} (${nothing}).`,
  );
}

/** The input checked against the operation's schemas, each refusal naming `part.field`. */
function checked(op: Operation, args: CallArgs) {
  const errors: FieldError[] = [];
  const check = (
    schema: Operation["params"] | Operation["query"] | Operation["body"],
    value: Record<string, unknown> | undefined,
    where: "path" | "query" | "body",
  ): unknown => {
    if (!schema) {
      if (value !== undefined && Object.keys(value).length > 0)
        errors.push({ field: where, rule: "not accepted", message: `is not taken by ${op.id}` });
      return undefined;
    }
    const given = value ?? (where === "body" ? undefined : {});
    const parsed = schema.safeParse(given);
    // What was given is sent, not the parse: a schema's defaults would add fields nobody asked
    // for (in a PATCH, a change), and the person approves exactly the given fields.
    if (parsed.success) return given;
    errors.push(...parsed.error.issues.map((issue) => describeIssue(issue, where)));
    return undefined;
  };
  const path = check(op.params, args.path, "path") as Record<string, unknown> | undefined;
  const query = check(op.query, args.query, "query") as Record<string, unknown> | undefined;
  const body = check(op.body, args.body, "body");
  if (errors.length > 0) throw new UserFacingError(invalidArguments(op.id, errors));
  return { path: path ?? {}, query: query ?? {}, body };
}

/**
 * A creation whose body names its own durable identity (`client_request_id`, the calendar's
 * manual events) gets one made here, once, when the model gave none: it is stored with the
 * intent, so every retry and confirmation repeats it and the API answers the stored event.
 */
function withRequestId(op: Operation, args: CallArgs): CallArgs {
  const schema = op.contract?.body?.schema;
  const required = (schema?.required as string[] | undefined) ?? [];
  if (!required.includes(REQUEST_ID) || args.body?.[REQUEST_ID] !== undefined) return args;
  return { ...args, body: { ...args.body, [REQUEST_ID]: `pmcp-${randomUUID()}` } };
}

function excerptOf(body: unknown): string | undefined {
  if (!body || typeof body !== "object") return undefined;
  const values = body as Record<string, unknown>;
  for (const field of ["content", "text", "comment", "title", "name", "description"])
    if (typeof values[field] === "string" && values[field] !== "") return firstWords(values[field]);
  return undefined;
}

/** A refusal only the API could know: remembered so later searches say so. */
function remember(ctx: ToolContext, op: Operation, error: ApiError, why: string): void {
  if (onlyTheApiKnew(error)) ctx.refusals.remember(ctx.session, op.id, why);
}

export const api: Domain = {
  tools: [findApiOperations, callApiRead, draftApiWrite],
};
