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
import { type SpanAttributes, traced, traceIdOf, tracingOn } from "../telemetry/tracing.js";

/** Who a server's caller is, for the records of its requests (set when its tools are installed). */
export interface Watch {
  observer: Observer;
  actorOf(ctx: ServerContext): Omit<Actor, "era">;
}

/** What `observed` needs of the server it runs in. */
export interface Observation {
  /** Null when nobody listens for events (no audit trail, no metrics): a span only. */
  watch: Watch | null;
  /** The protocol version negotiated at initialize (2025 sessions). */
  negotiated(): string | undefined;
}

/**
 * Runs one request's handler in its server span (OpenTelemetry MCP semantic conventions; a
 * child of the client's trace context) and tells the observer what it was, for whom, what it
 * caused upstream and how it ended. Runs inside the request's principal scope (its upstream
 * calls are gathered there). The observer's own failures never reach the caller: the audit sink
 * reports them itself, and a read goes on (writes fail closed in the gate, not here).
 */
export function observed(
  request: JSONRPCRequest,
  ctx: ServerContext,
  how: Observation,
  run: () => Promise<Result>,
): Promise<Result> {
  const target = targetOf(request);
  const era = eraOf(ctx, how);
  const parent = clientTraceparent(request, ctx);
  const start = tracingOn() ? { kind: "server" as const, parent } : NO_START;
  return traced(spanName(request.method, target), start, async (span) => {
    // Built only for a span that keeps them: most requests are not sampled.
    if (span?.recording) span.set(spanAttributes(request, ctx, target, era));
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
      if (error instanceof ProtocolError)
        span?.set({ "rpc.response.status_code": `${error.code}` });
      throw error;
    } finally {
      if (errorType) span?.fail(errorType);
      const watch = how.watch;
      if (watch?.observer.request) {
        const event: RequestEvent = {
          ...watch.actorOf(ctx),
          era,
          method: request.method,
          target,
          arguments: argumentsOf(request),
          outcome,
          errorType,
          durationMs: Math.round((performance.now() - started) * 10) / 10,
          calls: [...(currentCaller()?.calls ?? [])],
          traceId: span?.traceId ?? traceIdOf(parent),
        };
        // Told once the answer is on its way: the caller does not wait for the audit record and
        // the metric (a read's record is written at the end of the turn anyway; a write's steps
        // are recorded, and fsynced, by the gate before it acts).
        setImmediate(() => tell(watch.observer, event));
      }
    }
  });
}

const NO_START = {};

function tell(observer: Observer, event: RequestEvent): void {
  try {
    observer.request?.(event);
  } catch {
    // A sink that cannot record a read says so itself; the read is already answered.
  }
}

/**
 * `{mcp.method.name} {target}`, the target being a tool's or a prompt's name; a resource URI
 * names one record, so it is an attribute, never part of the name.
 */
function spanName(method: string, target: string | null): string {
  return target && (method === "tools/call" || method === "prompts/get")
    ? `${method} ${target}`
    : method;
}

function spanAttributes(
  request: JSONRPCRequest,
  ctx: ServerContext,
  target: string | null,
  era: string | null,
): SpanAttributes {
  const target_ = target ?? undefined;
  return {
    "mcp.method.name": request.method,
    "gen_ai.tool.name": request.method === "tools/call" ? target_ : undefined,
    "gen_ai.operation.name": request.method === "tools/call" ? "execute_tool" : undefined,
    "gen_ai.prompt.name": request.method === "prompts/get" ? target_ : undefined,
    "mcp.resource.uri": request.method === "resources/read" ? target_ : undefined,
    "mcp.protocol.version": era ?? undefined,
    "mcp.session.id": ctx.sessionId,
    "jsonrpc.request.id": request.id === undefined ? undefined : String(request.id),
    "network.transport": ctx.http ? "tcp" : "pipe",
  };
}

/**
 * The client's trace context: `params._meta.traceparent` (the 2026-07-28 protocol carries it
 * there), else the HTTP request's `traceparent` header.
 */
function clientTraceparent(request: JSONRPCRequest, ctx: ServerContext): string | null {
  const meta = (request.params as Params)?._meta as Record<string, unknown> | undefined;
  const inMeta = meta?.[TRACEPARENT_META_KEY];
  if (traceIdOf(inMeta)) return inMeta as string;
  const header = ctx.http?.req?.headers.get("traceparent") ?? null;
  return traceIdOf(header) ? header : null;
}

function eraOf(ctx: ServerContext, how: Observation): string | null {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  if (envelope !== undefined) {
    const version = envelope[PROTOCOL_VERSION_META_KEY];
    return typeof version === "string" ? version : "2026-07-28";
  }
  return how.negotiated() ?? null;
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
