/**
 * Where traces and metrics go, read from the standard OpenTelemetry variables (the SDK's own
 * names, so a collector's usual setup works as it is). Off unless an OTLP endpoint is set. The
 * exporters read the rest themselves (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, the
 * certificates); this decides only whether a signal is exported, where and how.
 */

export type OtlpProtocol = "http/protobuf" | "http/json";

export interface OtlpTarget {
  /** The full URL the exporter posts to (…/v1/traces, …/v1/metrics). */
  url: string;
  protocol: OtlpProtocol;
}

export const SAMPLERS = [
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
  "always_on",
  "always_off",
  "traceidratio",
] as const;

export interface TelemetrySettings {
  /** OTEL_SDK_DISABLED=true: nothing exported, whatever the endpoints say. */
  disabled: boolean;
  traces: OtlpTarget | null;
  metrics: OtlpTarget | null;
  /** OTEL_SERVICE_NAME, default portfolio-mcp (OTEL_RESOURCE_ATTRIBUTES may add more). */
  serviceName: string;
  /** service.instance.id: PORTFOLIO_REPLICA_ID, else the host name. */
  instance: string;
  sampler: { name: (typeof SAMPLERS)[number]; ratio: number };
  /** OTEL_METRIC_EXPORT_INTERVAL: how often metrics are pushed, in milliseconds. */
  metricIntervalMs: number;
  /** OTEL_BSP_SCHEDULE_DELAY: how long finished spans wait to be sent together, in milliseconds. */
  spanDelayMs: number;
}

/** A variable with a value this server cannot use: the message names it and the rule. */
export class TelemetrySettingError extends Error {
  override name = "TelemetrySettingError";
}

const SIGNALS = { traces: "TRACES", metrics: "METRICS" } as const;

export function telemetrySettings(env: NodeJS.ProcessEnv, instance: string): TelemetrySettings {
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const disabled = value("OTEL_SDK_DISABLED")?.toLowerCase() === "true";
  const target = (signal: keyof typeof SIGNALS): OtlpTarget | null => {
    const upper = SIGNALS[signal];
    const exporter = value(`OTEL_${upper}_EXPORTER`) ?? "otlp";
    if (exporter === "none" || disabled) return null;
    if (exporter !== "otlp")
      throw new TelemetrySettingError(
        `OTEL_${upper}_EXPORTER: must be otlp or none (this server exports over OTLP/HTTP only; point it at a collector)`,
      );
    const specific = value(`OTEL_EXPORTER_OTLP_${upper}_ENDPOINT`);
    const general = value("OTEL_EXPORTER_OTLP_ENDPOINT");
    if (!specific && !general) return null;
    const name = specific ? `OTEL_EXPORTER_OTLP_${upper}_ENDPOINT` : "OTEL_EXPORTER_OTLP_ENDPOINT";
    const url = specific ?? `${(general as string).replace(/\/+$/, "")}/v1/${signal}`;
    if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url))
      throw new TelemetrySettingError(`${name}: must be an http:// or https:// URL`);
    return { url, protocol: protocol(upper, value) };
  };
  const sampler = (value("OTEL_TRACES_SAMPLER") ?? "parentbased_always_on").toLowerCase();
  if (!(SAMPLERS as readonly string[]).includes(sampler))
    throw new TelemetrySettingError(`OTEL_TRACES_SAMPLER: must be one of ${SAMPLERS.join(", ")}`);
  const argument = value("OTEL_TRACES_SAMPLER_ARG");
  const ratio = argument === undefined ? 1 : Number(argument);
  if (sampler.endsWith("traceidratio") && !(ratio >= 0 && ratio <= 1))
    throw new TelemetrySettingError(
      "OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (the share of traces sampled)",
    );
  const milliseconds = (name: string, fallback: number, least: number) => {
    const text = value(name);
    const ms = text === undefined ? fallback : Number(text);
    if (!Number.isInteger(ms) || ms < least)
      throw new TelemetrySettingError(
        `${name}: must be a whole number of milliseconds, at least ${least}`,
      );
    return ms;
  };
  return {
    disabled,
    traces: target("traces"),
    metrics: target("metrics"),
    serviceName: value("OTEL_SERVICE_NAME") ?? "portfolio-mcp",
    instance,
    sampler: { name: sampler as TelemetrySettings["sampler"]["name"], ratio },
    metricIntervalMs: milliseconds("OTEL_METRIC_EXPORT_INTERVAL", 60_000, 100),
    spanDelayMs: milliseconds("OTEL_BSP_SCHEDULE_DELAY", 5_000, 0),
  };
}

function protocol(upper: string, value: (name: string) => string | undefined): OtlpProtocol {
  const specific = `OTEL_EXPORTER_OTLP_${upper}_PROTOCOL`;
  const name = value(specific) ? specific : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const chosen = value(name) ?? "http/protobuf";
  if (chosen === "http/protobuf" || chosen === "http/json") return chosen;
  throw new TelemetrySettingError(
    `${name}: must be http/protobuf (the default) or http/json${chosen === "grpc" ? "; gRPC is not supported here (a collector takes OTLP/HTTP on port 4318)" : ""}`,
  );
}

/** One line for doctor and the startup log: where each signal goes, or that it stays here. */
export function describeTelemetry(settings: TelemetrySettings): string {
  if (settings.disabled) return "not exported (OTEL_SDK_DISABLED=true)";
  if (!settings.traces && !settings.metrics)
    return "not exported (set OTEL_EXPORTER_OTLP_ENDPOINT to send traces and metrics to a collector)";
  const where = (target: OtlpTarget | null) =>
    target ? `${target.url} (${target.protocol})` : "not exported";
  const sampler = settings.sampler.name.endsWith("traceidratio")
    ? `${settings.sampler.name} ${settings.sampler.ratio}`
    : settings.sampler.name;
  return `traces: ${where(settings.traces)}${settings.traces ? `, sampler ${sampler}` : ""}; metrics: ${where(settings.metrics)}; service ${settings.serviceName}, instance ${settings.instance}`;
}
