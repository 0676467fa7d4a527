import type { Logger } from "../log.js";
import { type Metrics, NO_METRICS } from "./metrics.js";
import { describeTelemetry, type TelemetrySettings } from "./settings.js";

export interface Telemetry {
  metrics: Metrics;
  /** Sends what is left to the collector (3 s at most: a stop stays prompt) and stops. */
  close(): Promise<void>;
}

/** How long a stop waits for the last spans and metrics to reach the collector. */
const FLUSH_MS = 3_000;

/**
 * Traces and metrics for a server: the OpenTelemetry SDK is loaded only when something reads
 * them (the /metrics of serve --http, an OTLP endpoint); a stdio server without an endpoint loads
 * none of it. Without a transport (doctor) nothing starts.
 */
export async function startTelemetry(
  settings: TelemetrySettings,
  logger: Logger,
  transport: "stdio" | "http" | null,
): Promise<Telemetry> {
  const traces = transport ? settings.traces : null;
  const exportedMetrics = transport ? settings.metrics : null;
  if (!traces && !exportedMetrics && transport !== "http")
    return { metrics: NO_METRICS, close: async () => {} };
  if (traces || exportedMetrics) {
    (await import("./diagnostics.js")).forwardDiagnostics(logger);
    logger.info(`telemetry: ${describeTelemetry(settings)}`);
  }
  const stopTracing = traces
    ? await (await import("./sdk.js")).startTracing({ ...settings, traces })
    : null;
  // Over stdio nothing scrapes: metrics only when they are pushed.
  const metrics =
    transport === "http" || exportedMetrics
      ? await (await import("./meter.js")).openMetrics({
          ...settings,
          metrics: exportedMetrics,
          scraped: transport === "http",
        })
      : NO_METRICS;
  return {
    metrics,
    async close() {
      const flushed = Promise.all([metrics.close(), stopTracing?.()]);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise((resolve) => {
        timer = setTimeout(resolve, FLUSH_MS);
      });
      await Promise.race([flushed, late]).finally(() => clearTimeout(timer));
    },
  };
}
