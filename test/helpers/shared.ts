import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Sandbox } from "@portfolio-mcp/sandbox";
import { sha256Hex } from "../../src/transport/clients.js";
import { rawRequest } from "./raw.js";

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

export interface ClientEntry {
  name: string;
  token: string;
  delegated_user: { email: string } | { id: string };
  read_only?: boolean;
  tools?: string[];
}

/** SHARE_RAISED (helpers/api.ts), as a spawned server's environment. */
export const SHARE_RAISED_ENV = {
  PORTFOLIO_API_RATE_LIMIT_PER_MINUTE: "1000000",
  PORTFOLIO_API_SHARE_PER_CLIENT: "100",
  PORTFOLIO_API_MAX_IN_FLIGHT_PER_CLIENT: "1000",
};

/** Every server started and not yet stopped: a test that times out leaves none behind. */
const running = new Set<{ stop(): Promise<unknown> }>();

/** Stops whatever a test left running (for afterEach: a timed-out test skips its finally). */
export async function stopShared(): Promise<void> {
  await Promise.all([...running].map((shared) => shared.stop()));
}

/** The built server in shared HTTP mode, on this sandbox, with a clients file (null: none). */
export async function startShared(
  sandbox: Sandbox,
  clients: ClientEntry[] | null,
  env: Record<string, string> = {},
  args: string[] = [],
) {
  const dir = mkdtempSync(join(tmpdir(), "shared-"));
  const clientsFile = join(dir, "clients.json");
  if (clients)
    writeFileSync(
      clientsFile,
      JSON.stringify({
        clients: clients.map(({ token, ...rest }) => ({ ...rest, token_sha256: sha256Hex(token) })),
      }),
    );
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  );
  const child: ChildProcess = spawn(
    process.execPath,
    [CLI, "serve", "--http", "--port", "0", ...args],
    {
      env: {
        ...base,
        PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
        PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
        PORTFOLIO_API_SECRET: sandbox.credentials.secret,
        ...(clients ? { PORTFOLIO_MCP_CLIENTS_FILE: clientsFile } : {}),
        PORTFOLIO_STATE_DIR: join(dir, "state"),
        PORTFOLIO_CONFIRM: "two-step",
        PORTFOLIO_LOG_LEVEL: "warn",
        ...env,
      },
    },
  );
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  const banner = await new Promise<string>((resolve) => {
    child.stderr!.on("data", (chunk: string) => {
      stderr += chunk;
      if (stderr.includes("Stop with Ctrl+C")) resolve(stderr);
    });
    child.once("exit", () => resolve(stderr));
  });
  const url = /URL\s+(\S+\/mcp)/.exec(banner)?.[1];
  if (!url) throw new Error(`the server did not start: ${banner}`);
  const shared = {
    url,
    child,
    /** Everything the server wrote on stderr so far (logs and the banner). */
    stderr: async () => stderr,
    async connect(token: string) {
      const client = new Client({ name: "shared-test", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      return { client, transport };
    },
    /** A raw request, for headers and bodies the SDK would never send. */
    raw: (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      rawRequest(url, method, path, { host: new URL(url).host, ...headers }, body),
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      running.delete(shared);
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = await once(child, "exit");
      return code as number | null;
    },
  };
  running.add(shared);
  return shared;
}
