import type { GetPromptResult } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { OperationId } from "../api/catalogue.js";
import type { ApiClient } from "../api/client.js";
import type { Directory } from "../api/directory.js";
import type { Offer } from "../api/offer.js";
import type { AppViewName } from "../apps/catalog.js";
import type { DelegatedUser } from "../config.js";
import type { Logger } from "../log.js";
import type { BilledCalls } from "../writes/billed.js";
import type { WriteDraft, WriteGate } from "../writes/gate.js";
import type { Caller } from "../writes/intent.js";
import type { Sealer } from "../writes/seal.js";

/**
 * What the server offers, as data: tools, resources and prompts, each declared once in its
 * domain (src/domains/) and registered from one inventory (sentry-mcp's tools-as-data,
 * github-mcp-server's inventory).
 */

/** The business domain an item belongs to: how they are grouped, and which icon they wear. */
export type Family =
  | "portfolio"
  | "operations"
  | "deals"
  | "structures"
  | "operators"
  | "reference"
  | "calendar"
  | "alerts"
  | "search"
  | "reporting"
  | "workflows"
  | "me"
  | "confirmation"
  /** The generic tools that reach the rest of the key's contract. */
  | "api";

/** All four hints, always stated: a client must never have to guess (github-mcp-server). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Who a server instance acts for and as whom; fixed for a session or a request. */
export interface SessionContext {
  sessionId: string;
  delegatedUser: DelegatedUser | null;
  /**
   * The client identity writes are bound to (an HTTP client's name); null for a stdio client,
   * which is known by the name it gives in its client info.
   */
  client: string | null;
}

/** What every tool, resource and prompt runs with. */
export interface ToolContext {
  api: ApiClient;
  session: SessionContext;
  logger: Logger;
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Where exported files are also saved (PORTFOLIO_EXPORT_DIR), if anywhere. */
  exportDir: string | null;
  /** Reports progress when the client asked for it (a progress token); otherwise does nothing. */
  progress(done: number, total?: number, message?: string): Promise<void>;
  /** The write gate, who is calling, and the key of confirmation tokens; absent when read-only. */
  writes?: { gate: WriteGate; caller: Caller; sealer: Sealer; billed: BilledCalls };
  /** What this caller is offered of the API, for the generic tools. */
  offer: Offer;
  /** Names of operations, SPVs, operators and documents, kept a minute for every client. */
  directory: Directory;
  /** The curated tool offered for an operation, if any: better than the generic ones. */
  toolFor(operationId: string): string | null;
  /** What the API itself refused to callers lately, kept once per process (toolkit/refusals.ts). */
  refusals: Refusals;
}

/** Operations the API refused to a caller, remembered so that later searches say so. */
export interface Refusals {
  remember(session: SessionContext, operation: string, why: string): void;
  of(session: SessionContext): ReadonlyMap<string, string>;
}

/** What a tool hands back: structured content (checked by its outputSchema) and extra blocks. */
export interface ToolOutput<T> {
  structured: T;
  /** The structured content as text, when the tool already made it; otherwise JSON here. */
  text?: string;
  /**
   * The text holds nothing but plain characters (src/neutralise.ts), as its maker checked while
   * making it: it is shown without being tested again.
   */
  plain?: boolean;
  /** Blocks shown before the text rendering, such as a link to a workbook. */
  blocks?: Array<Record<string, unknown>>;
}

interface ToolBase<I extends z.ZodObject, O extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  family: Family;
  annotations: ToolAnnotations;
  /** The catalogue operations it may call; its readOnlyHint must agree with their kinds. */
  operations: readonly OperationId[];
  /**
   * For the generic tools: the kind of contract operation they reach (offered when the caller
   * is offered one), instead of fixed operations.
   */
  reach?: "read" | "write" | "any";
  /** The MCP Apps view a host renders its result in (the text result stays the model's). */
  view?: AppViewName;
  /**
   * For the tools that settle drafts: the way of confirming they serve. Each client is offered
   * only those of the way it confirms by (two-step tools to the model, app tools to the card).
   */
  settles?: "two-step" | "app";
  input: I;
  output: O;
}

/** A tool that answers at once: reads, and the confirmation tools. */
export interface RunTool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject>
  extends ToolBase<I, O> {
  kind: "run";
  run(args: z.output<I>, ctx: ToolContext): Promise<ToolOutput<z.output<O>>>;
}

/**
 * A write as a draft tool returns it: `operation` says which of the tool's `writes` it is, and
 * may be left out when the tool drafts only one.
 */
export type ToolDraft<Op extends string = string> = Omit<WriteDraft, "operation"> & {
  operation?: Op;
};

/**
 * A supervised write: it only drafts. The confirmation protocol (src/mcp/confirm.ts) stores the
 * draft as an intent and sends it once a person has confirmed it, through whichever channel the
 * client has.
 */
export interface DraftTool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject>
  extends ToolBase<I, O> {
  kind: "draft";
  /**
   * The operations it may draft (usually one; each is also in `operations`), or, for the
   * generic draft tool, any write the caller is offered of the key's contract.
   */
  writes: readonly OperationId[] | "offered";
  draft(args: z.output<I>, ctx: ToolContext): Promise<ToolDraft>;
}

/**
 * A draft tool as declared: with several operations in `writes`, its draft must say which one
 * it drafted (checked again at run time, src/mcp/confirm.ts).
 */
type DeclaredDraftTool<
  I extends z.ZodObject,
  O extends z.ZodObject,
  W extends OperationId[],
> = Omit<DraftTool<I, O>, "writes" | "draft"> & {
  writes: W;
  draft(
    args: z.output<I>,
    ctx: ToolContext,
  ): Promise<
    W extends [OperationId] ? ToolDraft<W[0]> : ToolDraft<W[number]> & { operation: W[number] }
  >;
};

export type ToolDefinition = RunTool | DraftTool;

export function defineTool<
  I extends z.ZodObject,
  O extends z.ZodObject,
  const W extends OperationId[] = [],
>(tool: RunTool<I, O> | DeclaredDraftTool<I, O, W>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** The hints every read-only tool carries. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
};

/** Suggestions for one argument, from what was typed so far. */
export type Completer = (directory: Directory, typed: string) => Promise<string[]>;

/**
 * A `portfolio://` resource or resource template. It reads through the tool that answers the
 * same question, so both give the same content and the same errors; it is offered only when
 * that tool is.
 */
export interface ResourceDefinition {
  name: string;
  title: string;
  description: string;
  family: Family;
  /** A fixed URI, or a template with `{var}` segments and `{?a,b}` options. */
  uri: string;
  tool: string;
  mimeType: string;
  complete?: Record<string, Completer>;
  /** Reads it another way than through the tool's structured output (a workbook's bytes). */
  read?(ctx: ToolContext): Promise<{ blob: string } | { text: string }>;
}

export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
  complete?: Completer;
}

/** A prompt; offered only when every tool it tells the assistant to use is offered. */
export interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  family: Family;
  arguments: PromptArgument[];
  tools: readonly string[];
  render(args: Record<string, string>, ctx: ToolContext): Promise<GetPromptResult>;
}

/** One domain's share of the inventory. */
export interface Domain {
  tools: readonly ToolDefinition[];
  resources?: readonly ResourceDefinition[];
  prompts?: readonly PromptDefinition[];
}
