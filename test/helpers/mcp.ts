import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import type { Sandbox } from "@portfolio-mcp/sandbox";
import type { Operation } from "../../src/api/catalogue.js";
import { Directory } from "../../src/api/directory.js";
import type { ApiSettings, ConfirmMode } from "../../src/config.js";
import { deliverability } from "../../src/inventory/deliverable.js";
import { createMcpServer } from "../../src/server.js";
import { RefusedOperations } from "../../src/toolkit/refusals.js";
import type { BilledCalls } from "../../src/writes/billed.js";
import { WriteGate } from "../../src/writes/gate.js";
import { FileJournal } from "../../src/writes/journal.js";
import { Sealer } from "../../src/writes/seal.js";
import { clientFor, contractRoutes } from "./api.js";

/** What a client that renders MCP Apps declares (the io.modelcontextprotocol/ui extension). */
export const APPS_CAPABILITY = {
  extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
};

export interface InMemoryOptions {
  settings?: Partial<ApiSettings>;
  exportDir?: string | null;
  /** Write tools and their gate; `false` for a read-only server. */
  writes?:
    | false
    | {
        mode?: ConfirmMode;
        gate?: WriteGate;
        stateDir?: string;
        ttlSeconds?: number;
        maxPending?: number;
      };
  /** Answers confirmation forms; the client then declares form elicitation. */
  elicit?: (request: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>;
  sessionId?: string;
  /** The client identity writes are bound to; default: the stdio-style name of the SDK client. */
  client?: string;
  /** A client's tool allowlist, as in the clients file. */
  allowedTools?: string[];
  /**
   * Serve a key's contract export, fetched from the sandbox as `--sandbox` does (true: the
   * sandbox's own key; a string: that key's export), or routes built by the test.
   */
  contract?: boolean | string | ReadonlyMap<string, Operation>;
  /** PORTFOLIO_ALLOW_SENSITIVE: families or operation ids. */
  allowSensitive?: string[];
  /** Declare the MCP Apps extension (the client renders ui:// views). */
  apps?: boolean;
  /** Where billable calls made lately are kept (a fleet's Redis); default: this process. */
  billed?: BilledCalls;
}

/**
 * The real MCP server and the SDK's 1.x Client (a 2025-era client), linked in memory, over a
 * sandbox.
 */
export async function connectInMemory(sandbox: Sandbox, options: InMemoryOptions = {}) {
  const routes =
    typeof options.contract === "object"
      ? options.contract
      : options.contract
        ? await contractRoutes(sandbox, options.contract === true ? undefined : options.contract)
        : undefined;
  const { api, logs } = clientFor(sandbox, options.settings, routes ? { routes } : {});
  const stateDir = options.writes
    ? (options.writes.stateDir ?? mkdtempSync(join(tmpdir(), "state-")))
    : null;
  const gate =
    options.writes === undefined || options.writes === false
      ? undefined
      : (options.writes.gate ??
        (await WriteGate.open({
          store: new FileJournal(stateDir as string, { logger: logs.logger }),
          api,
          logger: logs.logger,
          ttlMs: (options.writes.ttlSeconds ?? 900) * 1000,
          maxPendingPerUser: options.writes.maxPending ?? 20,
          undeliverable: deliverability(api.routes, {
            allowSensitive: new Set(options.allowSensitive ?? []),
          }),
        })));
  const server = createMcpServer(
    {
      api,
      directory: new Directory(api),
      logger: logs.logger,
      exportDir: options.exportDir ?? null,
      refusals: new RefusedOperations(),
      allowSensitive: new Set(options.allowSensitive ?? []),
      writes:
        gate && options.writes
          ? {
              gate,
              mode: options.writes.mode ?? "auto",
              billed: options.billed,
              sealer: await Sealer.open(stateDir ?? mkdtempSync(join(tmpdir(), "seal-")), null),
            }
          : undefined,
    },
    {
      sessionId: options.sessionId ?? "in-memory",
      delegatedUser: api.settings.delegatedUser,
      client: options.client ?? null,
      readOnly: false,
      allowedTools: options.allowedTools ? new Set(options.allowedTools) : null,
    },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client(
    { name: "portfolio-tests", version: "1.0.0" },
    {
      capabilities: {
        ...(options.elicit ? { elicitation: { form: {} } } : {}),
        ...(options.apps ? APPS_CAPABILITY : {}),
      },
    },
  );
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request.params));
  }
  await client.connect(clientSide);
  return {
    client,
    api,
    logs,
    gate,
    stateDir,
    async close() {
      await client.close();
      await server.close();
      await api.close();
    },
  };
}
