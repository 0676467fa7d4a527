import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moduleLog, sandboxServerEnv } from "../helpers/module-log.js";
import { startOtlpReceiver } from "../helpers/otlp.js";

/**
 * The stdio server, as a desktop client launches it: without an OTLP endpoint it loads no
 * OpenTelemetry module at all (its cold start does not grow); with one, it traces its requests
 * like the HTTP server, the confirmation form's wait and the delivery included.
 */
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
  await sandbox.close();
});

/** Starts the stdio server with a module hook that notes every @opentelemetry module it loads. */
async function stdioServer(env: Record<string, string>) {
  const {
    dir,
    hook,
    lines: loaded,
  } = moduleLog("telemetry-stdio-", {
    only: "/@opentelemetry/",
  });
  const client = new Client(
    { name: "telemetry-stdio", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: "accept",
    content: { confirm: true },
  }));
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--import", hook, CLI],
      env: { ...sandboxServerEnv(sandbox, dir), ...env },
      stderr: "pipe",
    }),
  );
  return { client, loaded };
}

describe("telemetry over stdio", () => {
  it("without an endpoint, loads no OpenTelemetry module", async () => {
    const { client, loaded } = await stdioServer({});
    try {
      const listed = await client.callTool({ name: "list_operations", arguments: { limit: 1 } });
      expect(listed.isError).toBeFalsy();
      expect(loaded()).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("with one, traces the call, the confirmation form's wait and the delivery in the client's trace", async () => {
    const { client, loaded } = await stdioServer({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_METRICS_EXPORTER: "none",
      OTEL_BSP_SCHEDULE_DELAY: "50",
      PORTFOLIO_REPLICA_ID: "desktop",
    });
    try {
      const trace = randomBytes(16).toString("hex");
      const parent = randomBytes(8).toString("hex");
      const operation = sandbox.control.state.data.operations[6]!;
      const done = (await client.callTool({
        name: "create_operation_note",
        arguments: { operation_id: operation.id, content: "Confirmée dans le formulaire" },
        _meta: { traceparent: `00-${trace}-${parent}-01` },
      })) as any;
      expect(done.isError, done.content?.[0]?.text).toBeFalsy();
      const inTrace = (name: string) => () =>
        receiver.spans.find((s) => s.traceId === trace && s.name === name);
      const call = await receiver.until(inTrace("tools/call create_operation_note"));
      expect(call).toMatchObject({ parentSpanId: parent, instance: "desktop" });
      expect(call.attributes["network.transport"]).toBe("pipe");
      const wait = await receiver.until(inTrace("confirmation wait"));
      expect(wait.parentSpanId).toBe(call.spanId);
      expect(wait.attributes["portfolio.answer"]).toBe("accept");
      const delivery = await receiver.until(inTrace("write delivery"));
      expect(delivery.parentSpanId).toBe(call.spanId);
      expect(delivery.links).toEqual([]); // confirmed in the very request that drafted it
      expect(loaded().some((url) => url.includes("/@opentelemetry/sdk-trace/"))).toBe(true);
    } finally {
      await client.close();
    }
  });
});
