import type { Attributes } from "@opentelemetry/api";
import type { PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import {
  AggregationTemporality,
  InstrumentType,
  MeterProvider,
  MetricReader,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import type { CounterOptions, Labels, Metrics } from "./metrics.js";
import { serviceResource } from "./resource.js";
import type { OtlpTarget, TelemetrySettings } from "./settings.js";

/**
 * The metrics registry: OpenTelemetry's metrics SDK, read two ways from the same instruments.
 * GET /metrics collects on demand and answers in the Prometheus text format (the exporter
 * package's serializer); with an OTLP endpoint, a periodic reader pushes the same metrics to the
 * collector. One set of instruments, no second bookkeeping.
 *
 * One reader when one will do: the SDK keeps (and hashes each recorded value's attributes) once
 * per reader, so a stdio server, which has no /metrics, keeps only the OTLP reader, and a scrape
 * reads the OTLP reader's figures when they are cumulative (the default; a delta preference
 * would let a scrape take what the push has not sent, so it gets a reader of its own).
 */
export async function openMetrics(
  settings: Pick<TelemetrySettings, "metrics" | "serviceName" | "instance" | "metricIntervalMs"> & {
    /** Whether GET /metrics reads them (serve --http); the stdio server only pushes. */
    scraped?: boolean;
  },
): Promise<Metrics> {
  const exporter = settings.metrics ? await otlpExporter(settings.metrics) : null;
  const push =
    exporter &&
    new PeriodicExportingMetricReader({
      exporter,
      exportIntervalMillis: settings.metricIntervalMs,
      exportTimeoutMillis: Math.min(30_000, settings.metricIntervalMs),
    });
  const pull: MetricReader | null =
    push && (settings.scraped === false || cumulative(exporter)) ? null : new OnDemandReader();
  const readers: MetricReader[] = [];
  for (const reader of [push, pull]) if (reader) readers.push(reader);
  const provider = new MeterProvider({ resource: serviceResource(settings), readers });
  // The Prometheus exporter's package is 2 MB of heap a stdio server would carry for nothing.
  const serializer =
    settings.scraped === false
      ? null
      : // No scope labels on every series (one scope), and target_info names the replica.
        new (await import("@opentelemetry/exporter-prometheus")).PrometheusSerializer(
          undefined,
          false,
          undefined,
          false,
          true,
        );
  return new OtelMetrics(provider, serializer ? (pull ?? push) : null, serializer);
}

function cumulative(exporter: PushMetricExporter): boolean {
  const temporalityOf = exporter.selectAggregationTemporality?.bind(exporter);
  return Object.values(InstrumentType).every(
    (type) => !temporalityOf || temporalityOf(type) === AggregationTemporality.CUMULATIVE,
  );
}

async function otlpExporter(target: OtlpTarget): Promise<PushMetricExporter> {
  const { OTLPMetricExporter } =
    target.protocol === "http/json"
      ? await import("@opentelemetry/exporter-metrics-otlp-http")
      : await import("@opentelemetry/exporter-metrics-otlp-proto");
  return new OTLPMetricExporter({ url: target.url });
}

/** A reader that collects when asked (a scrape), and has nothing of its own to flush. */
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

class OtelMetrics implements Metrics {
  private readonly meter;

  constructor(
    private readonly provider: MeterProvider,
    private readonly pull: MetricReader | null,
    private readonly serializer: PrometheusSerializer | null,
  ) {
    this.meter = provider.getMeter("portfolio-mcp");
  }

  counter(name: string, help: string, options: CounterOptions = {}) {
    const counter = this.meter.createCounter(name, { description: help, unit: options.unit });
    for (const labels of options.zeros ?? []) counter.add(0, labels);
    return (labels: Labels = {}, by = 1) => counter.add(by, labels as Attributes);
  }

  histogram(name: string, help: string, options: { unit: string; buckets: number[] }) {
    const histogram = this.meter.createHistogram(name, {
      description: help,
      unit: options.unit,
      advice: { explicitBucketBoundaries: options.buckets },
    });
    return (value: number, labels: Labels = {}) => histogram.record(value, labels as Attributes);
  }

  gauge(name: string, help: string, read: () => number, unit?: string): void {
    this.meter
      .createObservableGauge(name, { description: help, unit })
      .addCallback((result) => result.observe(read()));
  }

  counterFrom(name: string, help: string, read: () => number, unit?: string): void {
    this.meter
      .createObservableCounter(name, { description: help, unit })
      .addCallback((result) => result.observe(read()));
  }

  async render(): Promise<string> {
    if (!this.pull || !this.serializer) return "";
    const { resourceMetrics } = await this.pull.collect();
    return this.serializer.serialize(withUnitSuffixes(resourceMetrics));
  }

  async close(): Promise<void> {
    await this.provider.shutdown();
  }
}

/** The Prometheus suffix of a UCUM unit (OpenTelemetry's Prometheus compatibility spec). */
const UNIT_SUFFIXES: Record<string, string> = { s: "seconds", ms: "milliseconds", By: "bytes" };

/**
 * Names with their unit, as Prometheus expects them (`mcp.server.operation.duration` in seconds
 * is `mcp_server_operation_duration_seconds`): the compatibility spec asks for the suffix, and
 * this version of the serializer does not add it. OTLP keeps the instrument's own name.
 */
function withUnitSuffixes(metrics: ResourceMetrics): ResourceMetrics {
  return {
    ...metrics,
    scopeMetrics: metrics.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics.map((metric) => {
        const suffix = UNIT_SUFFIXES[metric.descriptor.unit];
        const name = metric.descriptor.name;
        // The unit in Prometheus's words (OpenMetrics wants the UNIT to end the name), or none.
        const unit = suffix ?? "";
        const named = !suffix || name.replace(/[^a-z0-9_]/gi, "_").endsWith(`_${suffix}`);
        return {
          ...metric,
          descriptor: { ...metric.descriptor, name: named ? name : `${name}_${suffix}`, unit },
        };
      }),
    })),
  };
}
