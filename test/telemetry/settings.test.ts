import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { telemetrySettings } from "../../src/telemetry/settings.js";

/**
 * The standard OTEL_* variables, as this server reads them: off without an endpoint, each signal
 * where its variables say, and a value it cannot honour refused in a sentence naming it. Doctor
 * says where telemetry goes.
 */
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

describe("telemetry settings", () => {
  it("are off without an endpoint, or with OTEL_SDK_DISABLED", () => {
    expect(telemetrySettings({}, "r1")).toMatchObject({ traces: null, metrics: null });
    const disabled = telemetrySettings(
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" },
      "r1",
    );
    expect(disabled).toMatchObject({ disabled: true, traces: null, metrics: null });
  });

  it("send each signal to its path, by the protocol asked (http/protobuf by default)", () => {
    const settings = telemetrySettings(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "portfolio-eu",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
      },
      "replica-2",
    );
    expect(settings).toMatchObject({
      traces: { url: "http://collector:4318/v1/traces", protocol: "http/protobuf" },
      metrics: { url: "http://collector:4318/v1/metrics", protocol: "http/json" },
      serviceName: "portfolio-eu",
      instance: "replica-2",
      sampler: { name: "parentbased_traceidratio", ratio: 0.25 },
    });
    const tracesOnly = telemetrySettings(
      {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/ingest",
        OTEL_METRICS_EXPORTER: "none",
      },
      "r",
    );
    expect(tracesOnly.traces?.url).toBe("https://traces.example/ingest");
    expect(tracesOnly.metrics).toBeNull();
  });

  it("refuse what they cannot honour, naming the variable", () => {
    const refused = (env: Record<string, string>) => () =>
      telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", ...env }, "r");
    expect(refused({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(
      /^OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf \(the default\) or http\/json; gRPC is not supported here/,
    );
    expect(refused({ OTEL_TRACES_SAMPLER: "jaeger_remote" })).toThrow(/^OTEL_TRACES_SAMPLER: /);
    expect(refused({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" })).toThrow(
      /^OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1/,
    );
    expect(refused({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(/^OTEL_TRACES_EXPORTER: /);
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/,
    );
  });
});

describe("doctor", () => {
  const doctor = (env: Record<string, string>) =>
    spawnSync(process.execPath, [CLI, "doctor", "--sandbox"], {
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("OTEL_"))),
        PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "doctor-telemetry-")),
        PORTFOLIO_LOG_LEVEL: "error",
        ...env,
      },
      encoding: "utf8",
    });

  it("shows where telemetry goes", () => {
    const off = doctor({});
    expect(off.stdout).toMatch(
      /telemetry\s+ok\s+not exported \(set OTEL_EXPORTER_OTLP_ENDPOINT to send traces and metrics to a collector\); serve --http also answers GET \/metrics/,
    );
    const on = doctor({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
      OTEL_SERVICE_NAME: "portfolio-doctor",
      PORTFOLIO_REPLICA_ID: "replica-7",
    });
    expect(on.stdout).toMatch(
      /telemetry\s+ok\s+traces: http:\/\/127\.0\.0\.1:9\/v1\/traces \(http\/protobuf\), sampler parentbased_always_on; metrics: http:\/\/127\.0\.0\.1:9\/v1\/metrics \(http\/protobuf\); service portfolio-doctor, instance replica-7/,
    );
  });

  it("stops at a setting it cannot honour, with one line naming it", () => {
    const refused = doctor({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf/);
  });
});
