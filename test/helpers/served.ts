import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyStdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as LegacyHttp } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { demoContract, type OpenApiDocument, type Sandbox } from "@portfolio-mcp/sandbox";
import { APPS_CAPABILITY } from "./mcp.js";

/**
 * The built command, reached the way a client reaches it: over stdio or Streamable HTTP, by the
 * SDK's 1.x client (a 2025-era session) or its 2.x client pinned to 2026-07-28.
 */
export type Wire = "stdio" | "http";
export type Era = "2025" | "2026";
export const WAYS: ReadonlyArray<readonly [Wire, Era]> = [
  ["stdio", "2025"],
  ["stdio", "2026"],
  ["http", "2025"],
  ["http", "2026"],
];

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const TOKEN = "served-test-token-0123456789";

export interface ServedOptions {
  wire: Wire;
  era: Era;
  /** Settings beside the sandbox's address and key (PORTFOLIO_*). */
  env?: Record<string, string>;
  /** Declare the MCP Apps extension. */
  apps?: boolean;
  /** Declare form elicitation (a 2026 client then gets input-required confirmations). */
  elicitation?: boolean;
  /**
   * Serve the sandbox key's contract export (PORTFOLIO_CONTRACT_FILE): the long tail too; a
   * function serves the export as it changes it.
   */
  contract?: boolean | ((document: OpenApiDocument) => OpenApiDocument);
}

export interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, any>;
  _meta?: Record<string, unknown>;
}

export interface Served {
  /** The SDK client itself, for what the helpers below do not cover. */
  client: LegacyClient | ModernClient;
  /** A tools/call, as the client sends it; a refused call's error is thrown. */
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** A 2026 tools/call sent as is (input-required answers come back to the test). */
  call(name: string, args: Record<string, unknown>, extra?: Record<string, unknown>): Promise<any>;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  /** PORTFOLIO_STATE_DIR: the journal's intents are under `intents/`. */
  stateDir: string;
  close(): Promise<void>;
}

export function servedEnv(
  sandbox: Sandbox,
  extra: Record<string, string> = {},
): Record<string, string> {
  const stateDir = mkdtempSync(join(tmpdir(), "served-"));
  return {
    ...(Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
    ) as Record<string, string>),
    PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
    PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
    PORTFOLIO_API_SECRET: sandbox.credentials.secret,
    PORTFOLIO_DELEGATED_USER_EMAIL: sandbox.credentials.delegatedUserEmail,
    PORTFOLIO_STATE_DIR: stateDir,
    PORTFOLIO_LOG_LEVEL: "warn",
    ...extra,
  };
}

/** Every command started and not yet closed: a test that times out leaves none behind. */
const running = new Set<Served>();

/** Closes whatever a test left running (for afterEach: a timed-out test skips its finally). */
export async function stopServed(): Promise<void> {
  await Promise.all([...running].map((served) => served.close()));
}

export async function serve(sandbox: Sandbox, options: ServedOptions): Promise<Served> {
  const env = servedEnv(sandbox, options.env);
  const stateDir = env.PORTFOLIO_STATE_DIR as string;
  if (options.contract) {
    const file = join(stateDir, "contract.json");
    const contract = demoContract(sandbox.credentials.keyId, { serverUrl: sandbox.baseUrl });
    if (!contract) throw new Error(`no demo contract for ${sandbox.credentials.keyId}`);
    const edit =
      typeof options.contract === "function" ? options.contract : (d: OpenApiDocument) => d;
    writeFileSync(file, JSON.stringify(edit(contract)));
    env.PORTFOLIO_CONTRACT_FILE = file;
  }
  let stderr = "";
  let child: ChildProcess | null = null;
  let url: URL | null = null;
  if (options.wire === "http") {
    child = spawn(process.execPath, [CLI, "serve", "--http", "--port", "0"], {
      env: { ...env, PORTFOLIO_MCP_TOKEN: TOKEN },
    });
    child.stderr!.setEncoding("utf8");
    const banner = await new Promise<string>((resolve) => {
      child!.stderr!.on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.includes("Stop with Ctrl+C")) resolve(stderr);
      });
      child!.once("exit", () => resolve(stderr));
    });
    const found = /URL\s+(\S+\/mcp)/.exec(banner)?.[1];
    if (!found) throw new Error(`the server did not start: ${banner}`);
    url = new URL(found);
  }
  const headers = { Authorization: `Bearer ${TOKEN}` };
  const capabilities = {
    ...(options.apps ? APPS_CAPABILITY : {}),
    ...(options.elicitation ? { elicitation: { form: {} } } : {}),
  };
  const info = { name: "served-test", version: "1.0.0" };
  const captureStderr = (stream: import("node:stream").Stream | null) =>
    stream?.on("data", (chunk: Buffer | string) => {
      stderr += chunk.toString();
    });

  /** The command over stdio, spawned by the SDK's transport (either SDK's: same options). */
  const stdio = <T extends { stderr: import("node:stream").Stream | null }>(
    Transport: new (params: {
      command: string;
      args: string[];
      env: Record<string, string>;
      stderr: "pipe";
    }) => T,
  ) => {
    const transport = new Transport({
      command: process.execPath,
      args: [CLI],
      env,
      stderr: "pipe",
    });
    captureStderr(transport.stderr);
    return transport;
  };
  let client: LegacyClient | ModernClient;
  try {
    if (options.era === "2025") {
      const legacy = new LegacyClient(info, { capabilities });
      await legacy.connect(
        url ? new LegacyHttp(url, { requestInit: { headers } }) : stdio(LegacyStdio),
      );
      client = legacy;
    } else {
      const modern = new ModernClient(info, {
        capabilities,
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        inputRequired: { autoFulfill: false },
      });
      await modern.connect(
        url ? new ModernHttp(url, { requestInit: { headers } }) : stdio(ModernStdio),
      );
      client = modern;
    }
  } catch (error) {
    child?.kill("SIGTERM"); // the HTTP server, when the client could not connect to it
    throw error;
  }
  const served: Served = {
    client,
    callTool: async (name, args) =>
      (await client.callTool({ name, arguments: args })) as unknown as ToolResult,
    call: (name, args, extra = {}) =>
      (client as ModernClient).request(
        { method: "tools/call", params: { name, arguments: args, ...extra } },
        { allowInputRequired: true },
      ),
    stderr: () => stderr,
    stateDir,
    async close() {
      running.delete(served);
      await client.close().catch(() => {});
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    },
  };
  running.add(served);
  return served;
}
