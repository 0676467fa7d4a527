import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AuditRecord } from "../../src/audit/record.js";
import { connectRedis } from "../../src/state/redis.js";
import { type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp.js";
import { REDIS_URL } from "../helpers/redis.js";
import { type ClientEntry, startShared, stopShared } from "../helpers/shared.js";

/**
 * Traces of a real `serve --http` deployment, as a collector receives them over OTLP/HTTP (a
 * receiver on loopback decodes each post): the server span of an MCP request continues the
 * client's trace, its upstream attempts are its children, and the sandbox sees the trace
 * context on the request it answered. A write drafted on one replica and sent by another is
 * one trace.
 */
const camille: ClientEntry = {
  name: "camille",
  token: "traces-token-camille-0123456789",
  delegated_user: { email: "camille.martin@aurore-capital.example" },
};
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  receiver = await startOtlpReceiver();
});
afterEach(() => stopShared());
afterAll(async () => {
  await receiver.close();
  await sandbox.close();
});

const exporting = (protocol: string, replica: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_METRICS_EXPORTER: "none",
  OTEL_BSP_SCHEDULE_DELAY: "50",
  PORTFOLIO_REPLICA_ID: replica,
});
const newTraceparent = () => {
  const trace = randomBytes(16).toString("hex");
  const parent = randomBytes(8).toString("hex");
  return { trace, parent, header: `00-${trace}-${parent}-01` };
};
const spansOf = (trace: string) => receiver.spans.filter((s) => s.traceId === trace);
const named = (trace: string, name: string) => () =>
  spansOf(trace).find((s) => s.name === name) ?? null;

describe.each(["http/protobuf", "http/json"])("traces over OTLP %s", (protocol) => {
  it("a tools/call with _meta.traceparent: a server span in that trace, its upstream attempt a child whose traceparent reached the API", async () => {
    const replica = `traces-${protocol.split("/")[1]}`;
    const server = await startShared(sandbox, [camille], exporting(protocol, replica));
    const { client } = await server.connect(camille.token);
    const mark = sandbox.control.mark();
    const tp = newTraceparent();
    const result = await client.callTool({
      name: "list_operations",
      arguments: { limit: 2 },
      _meta: { traceparent: tp.header },
    });
    expect(result.isError).toBeFalsy();

    const span = await receiver.until(named(tp.trace, "tools/call list_operations"));
    expect(span).toMatchObject({
      parentSpanId: tp.parent,
      kind: 2, // server
      statusCode: 0,
      instance: replica,
      encoding: protocol === "http/json" ? "application/json" : "application/x-protobuf",
    });
    expect(span.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "list_operations",
      "gen_ai.operation.name": "execute_tool",
      "mcp.protocol.version": expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      "mcp.session.id": expect.any(String),
      "jsonrpc.request.id": expect.any(String),
      "network.transport": "tcp",
    });
    expect(span.attributes["error.type"]).toBeUndefined();

    const upstream = await receiver.until(named(tp.trace, "GET /operations"));
    expect(upstream).toMatchObject({ parentSpanId: span.spanId, kind: 3, statusCode: 0 });
    expect(upstream.attributes).toMatchObject({
      "http.request.method": "GET",
      "url.template": "/operations",
      "http.response.status_code": 200,
      "portfolio.operation.id": "operations_list",
      "portfolio.upstream.request_id": expect.stringMatching(/^pmcp-/),
    });
    const [sent] = sandbox.control.requests({ since: mark, routeId: "operations_list" });
    expect(sent?.headers.traceparent).toBe(`00-${tp.trace}-${upstream.spanId}-01`);
    expect(sent?.headers["x-request-id"]).toBe(
      upstream.attributes["portfolio.upstream.request_id"],
    );
    await client.close();
  });

  it("an error result is error.type tool_error; without _meta the HTTP traceparent header is the parent", async () => {
    const replica = `errors-${protocol.split("/")[1]}`;
    const server = await startShared(sandbox, [camille], exporting(protocol, replica));
    const tp = newTraceparent();
    const client = new Client({ name: "traces-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: {
          headers: { Authorization: `Bearer ${camille.token}`, traceparent: tp.header },
        },
      }),
    );
    const missing = await client.callTool({
      name: "get_operation",
      arguments: { operation_id: "00000000-0000-4000-8000-000000000000" },
    });
    expect(missing.isError).toBe(true);
    const span = await receiver.until(named(tp.trace, "tools/call get_operation"));
    expect(span.parentSpanId).toBe(tp.parent);
    expect(span.statusCode).toBe(2);
    expect(span.attributes["error.type"]).toBe("tool_error");
    const upstream = await receiver.until(() =>
      spansOf(tp.trace).find((s) => s.attributes["http.response.status_code"] === 404),
    );
    expect(upstream).toMatchObject({ parentSpanId: span.spanId, statusCode: 2 });
    expect(upstream.attributes["error.type"]).toBe("404");
    await client.close();
  });
});

describe("a 2026-07-28 request (no session)", () => {
  it("carries its trace context in _meta: the server span continues it", async () => {
    const server = await startShared(sandbox, [camille], exporting("http/protobuf", "modern"));
    const client = new ModernClient(
      { name: "traces-modern", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new ModernTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${camille.token}` } },
      }),
    );
    const tp = newTraceparent();
    const read = await client.callTool({
      name: "list_deals",
      arguments: { limit: 1 },
      _meta: { traceparent: tp.header },
    });
    expect(read.isError).toBeFalsy();
    const span = await receiver.until(named(tp.trace, "tools/call list_deals"));
    expect(span.parentSpanId).toBe(tp.parent);
    expect(span.attributes["mcp.protocol.version"]).toBe("2026-07-28");
    expect(span.attributes["mcp.session.id"]).toBeUndefined();
    await client.close();
  });
});

describe("a write drafted on one replica and confirmed on another", () => {
  const prefix = `pmcp-test:traces:${randomBytes(4).toString("hex")}:`;
  afterAll(async () => {
    const redis = await connectRedis({ url: REDIS_URL, prefix });
    for await (const keys of redis.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 }))
      if (keys.length > 0) await redis.client.del(keys);
    await redis.close();
  });

  it("is one trace on both replicas, in their spans and their audit records", async () => {
    const dir = mkdtempSync(join(tmpdir(), "traces-fleet-"));
    const replicas = await Promise.all(
      ["fleet-a", "fleet-b"].map((name) =>
        startShared(sandbox, [camille], {
          ...exporting("http/protobuf", name),
          PORTFOLIO_REDIS_URL: REDIS_URL,
          PORTFOLIO_REDIS_PREFIX: prefix,
          PORTFOLIO_STATE_SECRET: "traces-test-fleet-secret-0123456789abcdef",
          PORTFOLIO_AUDIT_FILE: join(dir, `${name}.jsonl`),
        }),
      ),
    );
    const a = (await replicas[0]!.connect(camille.token)).client;
    const b = (await replicas[1]!.connect(camille.token)).client;
    const operation = sandbox.control.state.data.operations[4]!;
    const tp = newTraceparent();
    const draft = (await a.callTool({
      name: "create_operation_note",
      arguments: { operation_id: operation.id, content: "Point d'étape, même trace" },
      _meta: { traceparent: tp.header },
    })) as any;
    expect(draft.structuredContent.status).toBe("awaiting_confirmation");

    const mark = sandbox.control.mark();
    const other = newTraceparent(); // the confirming request belongs to a trace of its own
    const done = (await b.callTool({
      name: "confirm_write",
      arguments: { confirmation_id: draft.structuredContent.confirmation_id },
      _meta: { traceparent: other.header },
    })) as any;
    expect(done.structuredContent.status).toBe("succeeded");

    const drafted = await receiver.until(named(tp.trace, "tools/call create_operation_note"));
    expect(drafted.instance).toBe("fleet-a");
    const delivery = await receiver.until(named(tp.trace, "write delivery"));
    expect(delivery).toMatchObject({ instance: "fleet-b", parentSpanId: drafted.spanId });
    const confirming = await receiver.until(named(other.trace, "tools/call confirm_write"));
    expect(delivery.links).toContainEqual({ traceId: other.trace, spanId: confirming.spanId });
    const sent = await receiver.until(() =>
      spansOf(tp.trace).find(
        (s: ReceivedSpan) =>
          s.kind === 3 && s.attributes["portfolio.operation.id"] === "operation_note_create",
      ),
    );
    expect(sent).toMatchObject({ instance: "fleet-b", parentSpanId: delivery.spanId });
    const [request] = sandbox.control.requests({ since: mark, routeId: "operation_note_create" });
    expect(request?.headers.traceparent).toBe(`00-${tp.trace}-${sent.spanId}-01`);

    // The audit records of the draft (on a) and of its decision and delivery (on b) name it too.
    await Promise.all(replicas.map((r) => r.stop()));
    const trail = (name: string) =>
      readFileSync(join(dir, `${name}.jsonl`), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AuditRecord & Record<string, unknown>);
    const onA = trail("fleet-a").filter((r) => r.event === "draft");
    const onB = trail("fleet-b").filter((r) => r.event === "decision" || r.event === "delivery");
    expect(onA.map((r) => r.trace_id)).toEqual([tp.trace]);
    expect(onB.map((r) => [r.event, r.trace_id])).toEqual([
      ["decision", tp.trace],
      ["delivery", tp.trace],
    ]);
    const confirmRequest = trail("fleet-b").find(
      (r) => r.event === "request" && r.target === "confirm_write",
    );
    expect(confirmRequest?.trace_id).toBe(other.trace);
  });
});
