import {
  type Context,
  type ContextManager,
  context,
  defaultTextMapGetter,
  type Link,
  type Tracer as OtelTracer,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { fromScope, inScope } from "../scope.js";
import { VERSION } from "../version.js";
import { serviceResource } from "./resource.js";
import type { OtlpTarget, TelemetrySettings } from "./settings.js";
import {
  type ActiveSpan,
  installTracer,
  type SpanAttributes,
  type SpanStart,
  type Tracer,
} from "./tracing.js";

/**
 * OpenTelemetry's tracing SDK behind src/telemetry/tracing.ts: spans batched to the OTLP
 * endpoint (protobuf or JSON over HTTP), the sampler OTEL_TRACES_SAMPLER names, the active span
 * carried by the async context. Loaded only when an endpoint is configured. Returns the function
 * that sends what is left and stops.
 */
export async function startTracing(
  settings: Pick<
    TelemetrySettings,
    "traces" | "sampler" | "serviceName" | "instance" | "spanDelayMs"
  > & { traces: OtlpTarget },
): Promise<() => Promise<void>> {
  const provider = new TracerProvider({
    resource: serviceResource(settings),
    sampler: samplerOf(settings.sampler),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: await otlpExporter(settings.traces),
        scheduledDelayMillis: settings.spanDelayMs,
      }),
    ],
  });
  context.setGlobalContextManager(new ScopeContextManager());
  installTracer(new SdkTracer(provider.getTracer("portfolio-mcp", VERSION)));
  return async () => {
    installTracer(null);
    await provider.shutdown();
    context.disable();
  };
}

// The metrics' loader (telemetry/meter.ts) has the same shape: each signal has its own two
// exporter packages, and naming them here keeps each loaded only where it is used.
async function otlpExporter(target: OtlpTarget): Promise<SpanExporter> {
  const { OTLPTraceExporter } =
    target.protocol === "http/json"
      ? await import("@opentelemetry/exporter-trace-otlp-http")
      : await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter({ url: target.url });
}

function samplerOf({ name, ratio }: TelemetrySettings["sampler"]): Sampler {
  const root = (sampler: string): Sampler =>
    sampler.endsWith("always_off")
      ? new AlwaysOffSampler()
      : sampler.endsWith("traceidratio")
        ? new TraceIdRatioBasedSampler(ratio)
        : new AlwaysOnSampler();
  return name.startsWith("parentbased_")
    ? new ParentBasedSampler({ root: root(name) })
    : root(name);
}

const TRACE_CONTEXT = Symbol("trace context");

/**
 * The active trace context, kept in the process's one scope (src/scope.ts) rather than in an
 * AsyncLocalStorage of its own (AsyncLocalStorageContextManager): the same behaviour, without a
 * second storage that every asynchronous operation would pay for.
 */
class ScopeContextManager implements ContextManager {
  active(): Context {
    return fromScope<Context>(TRACE_CONTEXT) ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return inScope(TRACE_CONTEXT, context, () => fn.call(thisArg, ...args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== "function") return target;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => target.apply(this, args));
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    return this;
  }
}

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL };
const propagator = new W3CTraceContextPropagator();

class SdkTracer implements Tracer {
  constructor(private readonly tracer: OtelTracer) {}

  inSpan<T>(
    name: string,
    start: SpanStart,
    work: (span: ActiveSpan | null) => Promise<T>,
  ): Promise<T> {
    const active = context.active();
    // A child of nothing, or of a span not sampled, would be dropped anyway: not even made.
    if (start.childOnly && !trace.getSpan(active)?.isRecording()) return work(null);
    const parent = (start.parent && remote(start.parent)) || active;
    // No attributes for the sampler (none of OTEL_TRACES_SAMPLER's reads them): a span not
    // sampled is then made without copying any, and a sampled one gets them at once.
    const span = this.tracer.startSpan(
      name,
      { kind: KINDS[start.kind ?? "internal"], links: start.links && linksOf(start.links) },
      parent,
    );
    if (start.attributes && span.isRecording()) span.setAttributes(defined(start.attributes));
    const handle = new SpanHandle(span);
    return context.with(trace.setSpan(parent, span), async () => {
      try {
        return await work(handle);
      } catch (error) {
        if (!handle.failed) handle.fail(errorTypeOf(error));
        throw error;
      } finally {
        span.end();
      }
    });
  }

  traceparent(): string | null {
    const active = trace.getSpan(context.active())?.spanContext();
    if (!active || !trace.isSpanContextValid(active)) return null;
    return `00-${active.traceId}-${active.spanId}-0${active.traceFlags & 1}`;
  }
}

class SpanHandle implements ActiveSpan {
  failed = false;
  constructor(private readonly span: Span) {}

  get recording(): boolean {
    return this.span.isRecording();
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  set(attributes: SpanAttributes): void {
    if (this.span.isRecording()) this.span.setAttributes(defined(attributes));
  }

  fail(errorType: string): void {
    this.failed = true;
    // The type only: a message could quote what a user or the API said.
    this.span.setAttribute("error.type", errorType);
    this.span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

function linksOf(traceparents: ReadonlyArray<string | null>): Link[] {
  const links: Link[] = [];
  for (const link of traceparents) {
    const linked = link ? trace.getSpanContext(remote(link) ?? ROOT_CONTEXT) : undefined;
    if (linked) links.push({ context: linked });
  }
  return links;
}

/** The context a W3C traceparent names (a remote parent), or null when it is not one. */
function remote(traceparent: string): Context | null {
  const extracted = propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
  return trace.getSpanContext(extracted) ? extracted : null;
}

function defined(attributes: SpanAttributes = {}) {
  const kept: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) kept[key] = value;
  return kept;
}

/** A stable word for what went wrong: the error's code (ApiError, StoreUnavailable…) or class. */
function errorTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && code) return code;
  return error instanceof Error ? error.name : "_OTHER";
}
