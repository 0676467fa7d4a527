import type { z } from "zod";
import type { ApiClient } from "../api/client.js";
import type { ConfirmMode, DelegatedUser } from "../config.js";
import type { Logger } from "../log.js";
import type { WriteGate } from "../writes/gate.js";
import type { Caller } from "../writes/intent.js";

/** What write tools need: the gate, the confirmation mode, and a way to ask the human. */
export interface WriteContext {
  gate: WriteGate;
  mode: ConfirmMode;
  caller: Caller;
  /** Asks the human inside the call (form elicitation); null when the client cannot. */
  ask: ((message: string) => Promise<"accept" | "decline" | "cancel">) | null;
}

/** All four hints, always stated: a client must never have to guess (github-mcp-server). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Who a session acts for and as what; fixed when the session starts. */
export interface SessionContext {
  sessionId: string;
  delegatedUser: DelegatedUser | null;
  /**
   * The client identity writes are bound to (an HTTP client's name); null for a stdio client,
   * which is known by the name it gives at initialize.
   */
  client: string | null;
}

export interface ToolContext {
  api: ApiClient;
  session: SessionContext;
  logger: Logger;
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Where exported files are also saved (PORTFOLIO_EXPORT_DIR), if anywhere. */
  exportDir: string | null;
  /** Present unless the server is read-only. */
  writes?: WriteContext;
  /** Reports progress when the client asked for it (a progress token); otherwise does nothing. */
  progress(done: number, total?: number, message?: string): Promise<void>;
}

/** What a tool hands back: structured content (checked by its outputSchema) and extra blocks. */
export interface ToolOutput<T> {
  structured: T;
  /** The structured content as JSON, when the tool already made it; otherwise made here. */
  text?: string;
  /** Blocks shown before the text rendering, such as an embedded workbook. */
  blocks?: Array<Record<string, unknown>>;
}

/** A tool as data: its schemas, hints and the function that runs it (sentry-mcp's shape). */
export interface ToolDefinition<
  I extends z.ZodObject = z.ZodObject,
  O extends z.ZodObject = z.ZodObject,
> {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  input: I;
  output: O;
  run(args: z.output<I>, ctx: ToolContext): Promise<ToolOutput<z.output<O>>>;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  tool: ToolDefinition<I, O>,
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** The hints every read-only tool carries. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
};
