import { Readable } from "node:stream";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import {
  getMetricsFromStream,
  type PromData,
  type PromHistogramData,
  type PromMetrics,
} from "prom2javascript";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startOtlpReceiver } from "../helpers/otlp.js";
import { type ClientEntry, startShared, stopShared } from "../helpers/shared.js";

/**
 * GET /metrics of a real `serve --http` deployment, read by a Prometheus text parser: the
 * operation-duration histogram (OpenTelemetry MCP semantic conventions) and the upstream one
 * move with the calls made, the counters of the write events and refusals count them, and the
 * gauges are there. With an OTLP endpoint, the same metrics reach the collector.
 */
const camille: ClientEntry = {
  name: "camille",
  token: "metrics-token-camille-012345678",
  delegated_user: { email: "camille.martin@aurore-capital.example" },
};
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(() => stopShared());
afterAll(() => sandbox.close());

type Shared = Awaited<ReturnType<typeof startShared>>;
const scrape = async (server: Shared): Promise<PromMetrics> => {
  const reply = await server.raw("GET", "/metrics");
  expect(reply.status).toBe(200);
  return getMetricsFromStream(Readable.from([reply.body]));
};
const series = <T extends PromData | PromHistogramData>(
  metrics: PromMetrics,
  name: string,
  labels: Record<string, string>,
): T | undefined =>
  (metrics[name]?.data as T[] | undefined)?.find((s) =>
    Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
const LIST = { mcp_method_name: "tools/call", gen_ai_tool_name: "list_operations" };

describe("/metrics", () => {
  it("histograms move with the calls; write events, refusals and gauges are counted", async () => {
    const server = await startShared(sandbox, [camille]);
    const { client } = await server.connect(camille.token);
    await client.callTool({ name: "list_operations", arguments: { limit: 1 } });
    const before = await scrape(server);
    expect(before.mcp_server_operation_duration_seconds?.type).toBe("histogram");
    const first = series<PromHistogramData>(before, "mcp_server_operation_duration_seconds", LIST);
    expect(first?.count).toBe(1);

    for (let i = 0; i < 3; i++)
      await client.callTool({ name: "list_operations", arguments: { limit: 1 } });
    const operation = sandbox.control.state.data.operations[2]!;
    const draft = (await client.callTool({
      name: "create_operation_note",
      arguments: { operation_id: operation.id, content: "Compté, pas conservé" },
    })) as any;
    await client.callTool({
      name: "confirm_write",
      arguments: { confirmation_id: draft.structuredContent.confirmation_id },
    });
    expect((await server.raw("POST", "/mcp", { authorization: "Bearer wrong" }, "{}")).status).toBe(
      401,
    );
    const after = await scrape(server);

    const moved = series<PromHistogramData>(after, "mcp_server_operation_duration_seconds", LIST)!;
    expect(moved.count).toBe(4);
    expect(moved.sum).toBeGreaterThan(first!.sum ?? 0);
    // Cumulative buckets: +Inf holds every call, each bucket at least its predecessor's.
    expect(moved.buckets["+Inf"]).toBe(4);
    const counts = Object.entries(moved.buckets)
      .sort(([a], [b]) => (a === "+Inf" ? 1 : b === "+Inf" ? -1 : Number(a) - Number(b)))
      .map(([, count]) => count);
    expect(counts).toEqual([...counts].sort((x, y) => x - y));
    expect(counts.length).toBeGreaterThan(10);
    expect(Object.keys(moved.buckets)).toContain("0.005");

    const upstream = series<PromHistogramData>(
      after,
      "portfolio_mcp_upstream_request_duration_seconds",
      { operation: "operations_list", status_class: "2xx" },
    );
    expect(upstream?.count).toBe(4);
    const value = (name: string, labels: Record<string, string>) =>
      series<PromData>(after, name, labels)?.value;
    expect(value("portfolio_mcp_drafts_total", { outcome: "drafted" })).toBe(1);
    expect(
      value("portfolio_mcp_confirmations_total", { channel: "two-step", decision: "confirmed" }),
    ).toBe(1);
    expect(value("portfolio_mcp_deliveries_total", { outcome: "delivered" })).toBe(1);
    expect(value("portfolio_mcp_deliveries_total", { outcome: "uncertain" })).toBe(0);
    expect(value("portfolio_mcp_auth_refusals_total", { reason: "unknown_token" })).toBeGreaterThan(
      0,
    );
    expect(
      value("portfolio_mcp_upstream_calls_total", {
        operation: "operation_note_create",
        status: "201",
      }),
    ).toBe(1);
    for (const gauge of [
      "portfolio_mcp_intents_pending",
      "portfolio_mcp_intents_unfinished",
      "portfolio_mcp_sessions_open",
      "portfolio_mcp_upstream_cooldown_seconds",
    ])
      expect(after[gauge]?.type, gauge).toBe("gauge");
    expect(value("portfolio_mcp_sessions_open", {})).toBe(1);
    // Counts only: no user, no token, no argument.
    expect((await server.raw("GET", "/metrics")).body).not.toMatch(/camille|metrics-token|Compté/);
    await client.close();
  });

  it("with an OTLP endpoint, the same metrics reach the collector (OTLP/JSON)", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const server = await startShared(sandbox, [camille], {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_TRACES_EXPORTER: "none",
        OTEL_METRIC_EXPORT_INTERVAL: "200",
        PORTFOLIO_REPLICA_ID: "metrics-otlp",
      });
      const { client } = await server.connect(camille.token);
      await client.callTool({ name: "list_operations", arguments: { limit: 1 } });
      // /metrics and the push read the same figures: a scrape takes nothing from the push.
      const scraped = await scrape(server);
      const listed = series<PromHistogramData>(
        scraped,
        "mcp_server_operation_duration_seconds",
        LIST,
      );
      expect(listed?.count).toBe(1);
      const pushedAfter = receiver.metrics.length;
      const pushed = await receiver.until(() =>
        receiver.metrics.slice(pushedAfter).find((m) => m.name === "mcp.server.operation.duration"),
      );
      expect(pushed).toMatchObject({ unit: "s", instance: "metrics-otlp" });
      const points = (pushed.data.histogram as { dataPoints: Array<Record<string, any>> })
        .dataPoints;
      expect(points.map((p) => Number(p.count))).toContain(1);
      const again = await scrape(server);
      expect(
        series<PromHistogramData>(again, "mcp_server_operation_duration_seconds", LIST)?.count,
      ).toBe(1);
      expect(receiver.posts.every((p) => p.path === "/v1/metrics")).toBe(true);
      await client.close();
    } finally {
      await stopShared();
      await receiver.close();
    }
  });
});
