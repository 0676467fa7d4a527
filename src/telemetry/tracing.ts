/**
 * Where the server's code opens spans, without knowing whether anything records them. When no
 * OTLP endpoint is configured nothing is installed here, no OpenTelemetry module is loaded (the
 * stdio cold start stays as it is), and `traced` just runs its work. src/telemetry/sdk.ts
 * installs the OpenTelemetry SDK behind this when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** The span a piece of work runs in. */
export interface ActiveSpan {
  /** False when the trace is not sampled: nothing set on it is kept, so skip costly attributes. */
  readonly recording: boolean;
  readonly traceId: string;
  set(attributes: SpanAttributes): void;
  /** Marks the span failed (`error.type`, status error): a thrown error does it by itself. */
  fail(errorType: string, message?: string): void;
}

export interface SpanStart {
  kind?: "server" | "client" | "internal";
  attributes?: SpanAttributes;
  /**
   * A W3C traceparent to continue rather than the active span: the client's (an MCP request's
   * `_meta.traceparent`, the HTTP header), or a draft's (a write delivered later or elsewhere).
   */
  parent?: string | null;
  /** Other spans this one follows from (a delivery links the request that confirmed it). */
  links?: ReadonlyArray<string | null>;
  /**
   * Only as a child of a recording span: a Redis round trip or an upstream attempt that no
   * request caused (a sweep, a readiness probe) would otherwise start a trace of its own, and
   * under a trace not sampled it would be dropped anyway (near-free when not sampled).
   */
  childOnly?: boolean;
}

export interface Tracer {
  /**
   * Runs `work` in a new span, ended when it settles; a thrown error marks the span failed. The
   * span is null when `childOnly` finds no span active.
   */
  inSpan<T>(
    name: string,
    start: SpanStart,
    work: (span: ActiveSpan | null) => Promise<T>,
  ): Promise<T>;
  /** The active span as a W3C traceparent (what the upstream request carries); null if none. */
  traceparent(): string | null;
}

let installed: Tracer | null = null;

/** Installed once at startup when tracing is configured (src/telemetry/sdk.ts). */
export function installTracer(tracer: Tracer | null): void {
  installed = tracer;
}

export function tracingOn(): boolean {
  return installed !== null;
}

/** Runs `work` in a span when tracing is on (span null otherwise: then it just runs). */
export function traced<T>(
  name: string,
  start: SpanStart,
  work: (span: ActiveSpan | null) => Promise<T>,
): Promise<T> {
  return installed ? installed.inSpan(name, start, work) : work(null);
}

/** The active span's traceparent, for a request sent upstream or a draft kept for later. */
export function activeTraceparent(): string | null {
  return installed?.traceparent() ?? null;
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** The trace id of a W3C traceparent; null when it is not one (or is the invalid all-zero id). */
export function traceIdOf(traceparent: unknown): string | null {
  if (typeof traceparent !== "string") return null;
  const id = TRACEPARENT.exec(traceparent.trim())?.[1];
  return id && !/^0+$/.test(id) ? id : null;
}
