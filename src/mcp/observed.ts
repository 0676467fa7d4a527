import {
  type JSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  type Result,
  type ServerContext,
  TRACEPARENT_META_KEY,
} from "@modelcontextprotocol/server";
import type { Actor, Observer, RequestEvent } from "../events.js";
import { currentCaller } from "../http/principal.js";

/** The requests that read or change data: each is told to the observer (the audit trail). */
export const OBSERVED_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "resources/read",
  "prompts/get",
  "completion/complete",
]);

/** Who a server's caller is, for the records of its requests (set when its tools are installed). */
export interface Watch {
  observer: Observer;
  actorOf(ctx: ServerContext): Omit<Actor, "era">;
  /** The protocol version negotiated at initialize (2025 sessions). */
  negotiated(): string | undefined;
}

/**
 * Runs one request's handler and tells the observer what it was, for whom, what it caused
 * upstream and how it ended. Runs inside the request's principal scope (its upstream calls are
 * gathered there). The observer's own failures never reach the caller: the audit sink reports
 * them itself, and a read goes on (writes fail closed in the gate, not here).
 */
export async function observed(
  request: JSONRPCRequest,
  ctx: ServerContext,
  watch: Watch,
  run: () => Promise<Result>,
): Promise<Result> {
  const started = performance.now();
  let outcome: RequestEvent["outcome"] = "ok";
  let errorType: string | null = null;
  try {
    const result = await run();
    if ((result as { isError?: unknown }).isError === true) {
      outcome = "error";
      errorType = "tool_error";
    } else if ((result as { resultType?: unknown }).resultType === "input_required")
      outcome = "input_required";
    return result;
  } catch (error) {
    outcome = "error";
    errorType =
      error instanceof ProtocolError ? `protocol_error_${error.code}` : (error as Error).name;
    throw error;
  } finally {
    try {
      watch.observer.request?.({
        ...watch.actorOf(ctx),
        era: eraOf(ctx, watch),
        method: request.method,
        target: targetOf(request),
        arguments: argumentsOf(request),
        outcome,
        errorType,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        calls: [...(currentCaller()?.calls ?? [])],
        traceId: traceIdOf(request),
      });
    } catch {
      // A sink that cannot record a read says so itself; the read is already answered.
    }
  }
}

function eraOf(ctx: ServerContext, watch: Watch): string | null {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  if (envelope !== undefined) {
    const version = envelope[PROTOCOL_VERSION_META_KEY];
    return typeof version === "string" ? version : "2026-07-28";
  }
  return watch.negotiated() ?? null;
}

type Params = Record<string, unknown> | undefined;

function targetOf(request: JSONRPCRequest): string | null {
  const params = request.params as Params;
  switch (request.method) {
    case "tools/call":
    case "prompts/get":
      return typeof params?.name === "string" ? params.name : null;
    case "resources/read":
      return typeof params?.uri === "string" ? params.uri : null;
    case "completion/complete": {
      const ref = params?.ref as { name?: unknown; uri?: unknown } | undefined;
      const name = typeof ref?.name === "string" ? ref.name : ref?.uri;
      return typeof name === "string" ? name : null;
    }
    default:
      return null;
  }
}

function argumentsOf(request: JSONRPCRequest): unknown {
  const params = request.params as Params;
  switch (request.method) {
    case "tools/call":
    case "prompts/get":
      return params?.arguments ?? {};
    case "resources/read":
      return { uri: params?.uri };
    case "completion/complete":
      return params?.argument ?? {};
    default:
      return {};
  }
}

/** The trace id of W3C trace context in the request's `_meta.traceparent`, if any. */
function traceIdOf(request: JSONRPCRequest): string | null {
  const meta = (request.params as Params)?._meta as Record<string, unknown> | undefined;
  const parent = meta?.[TRACEPARENT_META_KEY];
  if (typeof parent !== "string") return null;
  return /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(parent)?.[1] ?? null;
}
