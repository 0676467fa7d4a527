import type { z } from "zod";
import type { ApiClient } from "../api/client.js";
import type { DelegatedUser } from "../config.js";
import type { Logger } from "../log.js";

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
}

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
}

/** What a tool hands back: structured content (checked by its outputSchema) and extra blocks. */
export interface ToolOutput<T> {
  structured: T;
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
