/**
 * The server's metrics as it records them: counters, histograms and gauges by name. This module
 * loads nothing: the registry behind it (src/telemetry/meter.ts, OpenTelemetry's metrics SDK)
 * is loaded only where metrics are read, `serve --http`'s /metrics or an OTLP endpoint; a stdio
 * server without one records into NO_METRICS. Labels never carry a user, a token or an id: only
 * statuses, reasons, channels, methods, tool and operation ids.
 */

export type Labels = Record<string, string>;
export type Count = (labels?: Labels, by?: number) => void;
export type Observe = (value: number, labels?: Labels) => void;

export interface CounterOptions {
  /** UCUM unit (`s`, `By`): named in OTLP, and as the suffix of the Prometheus name. */
  unit?: string;
  /** Label sets shown at 0 before anything is counted (absent series are not zeros to a query). */
  zeros?: Labels[];
}

export interface Metrics {
  counter(name: string, help: string, options?: CounterOptions): Count;
  histogram(name: string, help: string, options: { unit: string; buckets: number[] }): Observe;
  /** A value read when metrics are collected (open sessions, pending drafts). */
  gauge(name: string, help: string, read: () => number, unit?: string): void;
  /** A counter kept elsewhere (CPU time, token exchanges), read when metrics are collected. */
  counterFrom(name: string, help: string, read: () => number, unit?: string): void;
  /** Every metric in the Prometheus text format, for GET /metrics. */
  render(): Promise<string>;
  /** Pushes what an OTLP reader has not sent yet, and stops. */
  close(): Promise<void>;
}

const ignore = () => {};

/** Metrics nobody reads: a stdio server without an OTLP endpoint. */
export const NO_METRICS: Metrics = {
  counter: () => ignore,
  histogram: () => ignore,
  gauge: ignore,
  counterFrom: ignore,
  render: async () => "",
  close: async () => {},
};
