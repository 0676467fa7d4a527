import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import protobuf from "protobufjs";

/**
 * An OTLP/HTTP receiver on loopback, as a collector would be: it decodes what the server's
 * exporters post to /v1/traces (protobuf or JSON) and /v1/metrics (JSON), and keeps it.
 */

/** A span as received, whatever the encoding: ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client (the OTLP SpanKind). */
  kind: number;
  attributes: Record<string, unknown>;
  /** 2: error (the OTLP StatusCode). */
  statusCode: number;
  links: Array<{ traceId: string; spanId: string }>;
  /** The sender's service.instance.id (the replica). */
  instance: string;
  /** How it came: application/x-protobuf or application/json. */
  encoding: string;
}

export interface ReceivedMetric {
  name: string;
  unit: string;
  /** The OTLP JSON data point groups, as sent (sum, gauge, histogram). */
  data: Record<string, unknown>;
}

/**
 * The parts of opentelemetry-proto (v1: common, resource, trace, collector/trace) the receiver
 * reads, field numbers as the specification has them. A wrong number would decode to nothing,
 * and the test that sends both encodings compares them.
 */
const TRACE_PROTO = {
  nested: {
    AnyValue: {
      oneofs: {
        value: {
          oneof: [
            "stringValue",
            "boolValue",
            "intValue",
            "doubleValue",
            "arrayValue",
            "kvlistValue",
            "bytesValue",
          ],
        },
      },
      fields: {
        stringValue: { type: "string", id: 1 },
        boolValue: { type: "bool", id: 2 },
        intValue: { type: "int64", id: 3 },
        doubleValue: { type: "double", id: 4 },
        arrayValue: { type: "ArrayValue", id: 5 },
        kvlistValue: { type: "KeyValueList", id: 6 },
        bytesValue: { type: "bytes", id: 7 },
      },
    },
    ArrayValue: { fields: { values: { rule: "repeated", type: "AnyValue", id: 1 } } },
    KeyValueList: { fields: { values: { rule: "repeated", type: "KeyValue", id: 1 } } },
    KeyValue: { fields: { key: { type: "string", id: 1 }, value: { type: "AnyValue", id: 2 } } },
    InstrumentationScope: {
      fields: { name: { type: "string", id: 1 }, version: { type: "string", id: 2 } },
    },
    Resource: { fields: { attributes: { rule: "repeated", type: "KeyValue", id: 1 } } },
    Status: { fields: { message: { type: "string", id: 2 }, code: { type: "int32", id: 3 } } },
    Link: {
      fields: {
        traceId: { type: "bytes", id: 1 },
        spanId: { type: "bytes", id: 2 },
        traceState: { type: "string", id: 3 },
        attributes: { rule: "repeated", type: "KeyValue", id: 4 },
      },
    },
    Span: {
      fields: {
        traceId: { type: "bytes", id: 1 },
        spanId: { type: "bytes", id: 2 },
        traceState: { type: "string", id: 3 },
        parentSpanId: { type: "bytes", id: 4 },
        name: { type: "string", id: 5 },
        kind: { type: "int32", id: 6 },
        startTimeUnixNano: { type: "fixed64", id: 7 },
        endTimeUnixNano: { type: "fixed64", id: 8 },
        attributes: { rule: "repeated", type: "KeyValue", id: 9 },
        links: { rule: "repeated", type: "Link", id: 13 },
        status: { type: "Status", id: 15 },
      },
    },
    ScopeSpans: {
      fields: {
        scope: { type: "InstrumentationScope", id: 1 },
        spans: { rule: "repeated", type: "Span", id: 2 },
      },
    },
    ResourceSpans: {
      fields: {
        resource: { type: "Resource", id: 1 },
        scopeSpans: { rule: "repeated", type: "ScopeSpans", id: 2 },
      },
    },
    ExportTraceServiceRequest: {
      fields: { resourceSpans: { rule: "repeated", type: "ResourceSpans", id: 1 } },
    },
  },
};

const ExportTraceServiceRequest = protobuf.Root.fromJSON(TRACE_PROTO).lookupType(
  "ExportTraceServiceRequest",
);

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const metrics: Array<ReceivedMetric & { instance: string }> = [];
  const posts: Array<{ path: string; contentType: string }> = [];
  const server = createServer(async (req, res) => {
    const body = await read(req);
    const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
    posts.push({ path: req.url ?? "", contentType });
    try {
      if (req.url === "/v1/traces") spans.push(...decodeTraces(body, contentType));
      else if (req.url === "/v1/metrics" && contentType === "application/json")
        metrics.push(...decodeMetrics(JSON.parse(body.toString("utf8"))));
      else if (req.url !== "/v1/metrics") return void res.writeHead(404).end();
    } catch (error) {
      res.writeHead(400).end(String(error));
      return;
    }
    // An empty ExportServiceResponse: full success, in the encoding asked.
    res
      .writeHead(200, { "content-type": contentType || "application/json" })
      .end(contentType === "application/json" ? "{}" : Buffer.alloc(0));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    spans,
    metrics,
    posts,
    /** Waits until `found` says yes (the exporters send in batches). */
    async until<T>(found: () => T | undefined | null | false, ms = 10_000): Promise<T> {
      const deadline = Date.now() + ms;
      for (;;) {
        const value = found();
        if (value) return value;
        if (Date.now() > deadline) throw new Error("the OTLP receiver did not get it in time");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

type Json = Record<string, any>;

function decodeTraces(body: Buffer, contentType: string): ReceivedSpan[] {
  const protobufEncoded = contentType === "application/x-protobuf";
  const request: Json = protobufEncoded
    ? ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), {
        longs: String,
      })
    : JSON.parse(body.toString("utf8"));
  // Ids: bytes in protobuf, hex strings in OTLP/JSON (the specification's exception to base64).
  const hex = (id: unknown) =>
    id instanceof Uint8Array ? Buffer.from(id).toString("hex") : String(id ?? "");
  return (request.resourceSpans ?? []).flatMap((rs: Json) => {
    const resource = attributesOf(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss: Json) =>
      (ss.spans ?? []).map(
        (span: Json): ReceivedSpan => ({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: span.name,
          kind: Number(span.kind ?? 0),
          attributes: attributesOf(span.attributes),
          statusCode: Number(span.status?.code ?? 0),
          links: (span.links ?? []).map((l: Json) => ({
            traceId: hex(l.traceId),
            spanId: hex(l.spanId),
          })),
          instance: String(resource["service.instance.id"]),
          encoding: contentType,
        }),
      ),
    );
  });
}

function decodeMetrics(request: Json): Array<ReceivedMetric & { instance: string }> {
  return (request.resourceMetrics ?? []).flatMap((rm: Json) => {
    const instance = String(attributesOf(rm.resource?.attributes)["service.instance.id"]);
    return (rm.scopeMetrics ?? []).flatMap((sm: Json) =>
      (sm.metrics ?? []).map((m: Json) => {
        const { name, unit, description: _d, ...data } = m;
        return { name, unit: unit ?? "", data, instance };
      }),
    );
  });
}

/** OTLP KeyValues as a plain object (numbers as numbers, whichever encoding). */
export function attributesOf(list: Json[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = plain(value);
  return out;
}

function plain(value: Json | undefined): unknown {
  if (!value) return undefined;
  if ("stringValue" in value) return value.stringValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return Number(value.doubleValue);
  if ("boolValue" in value) return value.boolValue;
  if ("arrayValue" in value) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}
