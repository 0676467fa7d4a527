import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler } from "@modelcontextprotocol/server";
import type { Sandbox } from "@portfolio-mcp/sandbox";
import { Directory } from "../../src/api/directory.js";
import type { ApiSettings, ConfirmMode } from "../../src/config.js";
import { deliverability } from "../../src/inventory/deliverable.js";
import { createMcpServer } from "../../src/server.js";
import { RefusedOperations } from "../../src/toolkit/refusals.js";
import { WriteGate } from "../../src/writes/gate.js";
import { FileJournal } from "../../src/writes/journal.js";
import { Sealer } from "../../src/writes/seal.js";
import { clientFor } from "./api.js";
import { APPS_CAPABILITY } from "./mcp.js";

export interface ModernOptions {
  settings?: Partial<ApiSettings>;
  mode?: ConfirmMode;
  /** The client identity writes are bound to (as an HTTP client's name). */
  client?: string;
  allowedTools?: string[];
  /** Declare form elicitation; answers come from `answer` (auto mode) or by hand. */
  elicitation?: boolean;
  /** Declare the MCP Apps extension (the client renders ui:// views). */
  apps?: boolean;
  /** Answers the confirmation form; without it, input-required results come back to the test. */
  answer?: (message: string) => {
    action: "accept" | "decline" | "cancel";
    content?: Record<string, string | number | boolean>;
  };
  /** Shared with another harness: the same journal, key and clock, as replicas would share. */
  shared?: Shared;
}

export interface Shared {
  stateDir: string;
  gate?: WriteGate;
  sealer?: Sealer;
  now: { ms: number | null };
}

/**
 * The real MCP server behind the SDK's own 2026-07-28 entry (createMcpHandler, one server per
 * request), spoken to by the SDK's 2.x client pinned to 2026-07-28, with no socket in between.
 * The clock of the gate and of the seal can be moved (`shared.now.ms`).
 */
export async function connectModern(sandbox: Sandbox, options: ModernOptions = {}) {
  const { api, logs } = clientFor(sandbox, options.settings);
  const shared: Shared = options.shared ?? {
    stateDir: mkdtempSync(join(tmpdir(), "modern-")),
    now: { ms: null },
  };
  const clock = () => shared.now.ms ?? Date.now();
  shared.gate ??= await WriteGate.open({
    store: new FileJournal(shared.stateDir, { logger: logs.logger }),
    api,
    logger: logs.logger,
    ttlMs: 900_000,
    maxPendingPerUser: 20,
    clock,
    undeliverable: deliverability(api.routes, { allowSensitive: new Set() }),
  });
  shared.sealer ??= await Sealer.open(shared.stateDir, null, clock);
  // One memory of the API's refusals for every request's server, as a process keeps.
  const refusals = new RefusedOperations();
  const handler = createMcpHandler(
    () =>
      createMcpServer(
        {
          api,
          directory: new Directory(api),
          logger: logs.logger,
          exportDir: null,
          refusals,
          writes: {
            gate: shared.gate as WriteGate,
            mode: options.mode ?? "auto",
            sealer: shared.sealer as Sealer,
          },
        },
        {
          sessionId: null,
          delegatedUser: api.settings.delegatedUser,
          client: options.client ?? "http:modern-tests",
          readOnly: false,
          allowedTools: options.allowedTools ? new Set(options.allowedTools) : null,
        },
      ),
    { legacy: "reject" },
  );
  const client = new Client(
    { name: "modern-tests", version: "1.0.0" },
    {
      capabilities: {
        ...(options.elicitation ? { elicitation: { form: {} } } : {}),
        ...(options.apps ? APPS_CAPABILITY : {}),
      },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      ...(options.answer ? {} : { inputRequired: { autoFulfill: false } }),
    },
  );
  const answer = options.answer;
  if (answer)
    client.setRequestHandler("elicitation/create", async (request) =>
      answer((request.params as { message: string }).message),
    );
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://modern.test/mcp"), {
      fetch: (url, init) => handler.fetch(new Request(url, init)),
    }),
  );
  return {
    client,
    api,
    logs,
    shared,
    /** A tools/call sent as is: for retries with a request state and input responses. */
    call: (name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      client.request(
        { method: "tools/call", params: { name, arguments: args, ...extra } },
        { allowInputRequired: true },
      ),
    async close() {
      await client.close();
      await handler.close();
      await api.close();
    },
  };
}
