import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_KEYS, type Sandbox, startSandbox } from "../../src/sandbox/index.js";

/**
 * The real command, spoken to by the SDK's 2.x client pinned to 2026-07-28: over stdio, over
 * Streamable HTTP, and over HTTP with --stateless. Each reads, then writes through the
 * input-required round trip; the sandbox's request log shows one POST per accepted write.
 */
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const TOKEN = "modern-process-token-0123456789";
let sandbox: Sandbox;
const children: ChildProcess[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(async () => {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    }),
  );
  await sandbox.close();
});

const env = () => ({
  ...(Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  ) as Record<string, string>),
  PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
  PORTFOLIO_API_KEY_ID: DEMO_KEYS.full.keyId,
  PORTFOLIO_API_SECRET: DEMO_KEYS.full.secret,
  PORTFOLIO_DELEGATED_USER_EMAIL: "camille.martin@aurore-capital.example",
  PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "modern-process-")),
  PORTFOLIO_LOG_LEVEL: "warn",
});

function modernClient() {
  const client = new Client(
    { name: "modern-process-test", version: "1.0.0" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push((request.params as { message: string }).message);
    return { action: "accept", content: { confirm: true } };
  });
  return { client, asked };
}

async function startHttp(extra: string[]): Promise<URL> {
  const child = spawn(process.execPath, [CLI, "serve", "--http", "--port", "0", ...extra], {
    env: { ...env(), PORTFOLIO_MCP_TOKEN: TOKEN },
  });
  children.push(child);
  let banner = "";
  child.stderr!.setEncoding("utf8");
  for await (const chunk of child.stderr!) {
    banner += chunk;
    if (banner.includes("Stop with Ctrl+C")) break;
  }
  child.stderr!.resume();
  return new URL(/URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(banner)![1]!);
}

const httpTransport = (url: URL) =>
  new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  });

async function exercise(client: Client, asked: string[], dashboard: string) {
  expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  expect(client.getServerVersion()?.name).toBe("portfolio-mcp");
  const { tools } = await client.listTools();
  expect(tools).toHaveLength(28);
  const listed = (await client.callTool({
    name: "list_operations",
    arguments: { status: "active", limit: 3 },
  })) as any;
  expect(listed.structuredContent.total).toBe(54);
  const mark = sandbox.control.mark();
  const written = (await client.callTool({
    name: "create_custom_dashboard",
    arguments: { name: dashboard },
  })) as any;
  expect(written.structuredContent.status).toBe("succeeded");
  expect(asked.at(-1)).toContain(`«${dashboard}»`);
  const posts = sandbox.control
    .requests({ since: mark, routeId: "custom_dashboard_create" })
    .filter((e) => (e.body as { name?: string }).name === dashboard);
  expect(posts).toHaveLength(1);
}

describe("the command, for a 2026-07-28 client", () => {
  it("over stdio: reads, and writes once after the form is accepted", async () => {
    const { client, asked } = modernClient();
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [CLI], env: env() }),
    );
    try {
      await exercise(client, asked, "Moderne stdio");
    } finally {
      await client.close();
    }
  });

  it("over Streamable HTTP, with and without --stateless", async () => {
    for (const [flags, dashboard] of [
      [[], "Moderne HTTP"],
      [["--stateless"], "Moderne sans état"],
    ] as const) {
      const url = await startHttp([...flags]);
      const { client, asked } = modernClient();
      await client.connect(httpTransport(url));
      try {
        await exercise(client, asked, dashboard);
      } finally {
        await client.close();
      }
    }
  });
});
