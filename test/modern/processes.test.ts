import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { DEMO_KEYS, type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVENTORY } from "../../src/inventory/index.js";
import { untilBanner } from "../helpers/banner.js";
import { MCP_HEADERS, rawRequest } from "../helpers/raw.js";
import { REDIS_URL } from "../helpers/redis.js";

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

/**
 * A loopback port that accepts Redis connections and holds them, unanswered, until open():
 * then each is piped to the real Redis.
 */
async function heldRedis() {
  const held: Socket[] = [];
  const all = new Set<Socket>();
  let opened = false;
  const upstream = new URL(REDIS_URL);
  const pipeOn = (socket: Socket) => {
    const real = connect(Number(upstream.port || 6379), upstream.hostname);
    all.add(real);
    socket.pipe(real).pipe(socket);
    const end = () => {
      socket.destroy();
      real.destroy();
    };
    socket.on("error", end).on("close", end);
    real.on("error", end).on("close", end);
  };
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    all.add(socket);
    if (opened) return pipeOn(socket);
    held.push(socket);
    socket.on("error", () => socket.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    /** Connections made by the server to its Redis, held or piped. */
    connections: () => accepted,
    open() {
      opened = true;
      for (const socket of held.splice(0)) if (!socket.destroyed) pipeOn(socket);
    },
    async close() {
      for (const socket of all) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

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
  const banner = await untilBanner(child);
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
  // The curated tools and the two-step pair (the sandbox's contract is not loaded here).
  expect(tools).toHaveLength(INVENTORY.tools.filter((t) => !t.reach && t.settles !== "app").length);
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
  it("answers discovery before the rest has started: the probe lands on 2026-07-28 while the server's Redis is still silent", async () => {
    // Order, not time: the server's preparation (embedded sandbox, Redis, contract, API client)
    // cannot finish while the gate holds its Redis connection, yet the client's probe of the
    // protocol era is answered; what needs the rest waits for the gate to open, then is served.
    const gate = await heldRedis();
    try {
      const client = new Client(
        { name: "probing-client", version: "1.0.0" },
        // The bound is only a ceiling for a loaded machine; the order is what is checked.
        { versionNegotiation: { mode: "auto", probe: { timeoutMs: 30_000 } } },
      );
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, "--sandbox"],
          env: {
            ...env(),
            PORTFOLIO_LOG_LEVEL: "error",
            // Database 1: the connection's handshake selects it, so it waits for an answer.
            PORTFOLIO_REDIS_URL: `redis://127.0.0.1:${gate.port}/1`,
            PORTFOLIO_STATE_SECRET: "a".repeat(64),
          },
        }),
      );
      try {
        expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
        const tools = client.listTools();
        gate.open();
        expect((await tools).tools.length).toBeGreaterThan(30);
        // The preparation did go through the gate: it could not have finished before open().
        expect(gate.connections()).toBeGreaterThan(0);
      } finally {
        await client.close();
      }
    } finally {
      await gate.close();
    }
  }, 60_000);

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

/** A 2026-07-28 request as the wire carries it: the per-request envelope and the method header. */
function modernRequest(id: number, method: string, params: Record<string, unknown> = {}) {
  const body = {
    jsonrpc: "2.0",
    id,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
      },
    },
  };
  return JSON.stringify(body);
}

describe("the HTTP endpoint, on the wire", () => {
  let url: URL;
  beforeAll(async () => {
    url = await startHttp([]);
  });
  const post = (body: string, headers: Record<string, string> = {}) =>
    rawRequest(
      url.href,
      "POST",
      url.pathname,
      {
        ...MCP_HEADERS,
        host: url.host,
        authorization: `Bearer ${TOKEN}`,
        "mcp-protocol-version": "2026-07-28",
        ...headers,
      },
      body,
    ).then((reply) => ({ status: reply.status, message: JSON.parse(reply.body) }));

  it("answers a method removed in 2026 with 404 and -32601, keeping the request's id", async () => {
    for (const method of ["initialize", "logging/setLevel", "resources/subscribe"]) {
      const { status, message } = await post(modernRequest(41, method), { "mcp-method": method });
      expect(status, method).toBe(404);
      expect(message, method).toMatchObject({ id: 41, error: { code: -32601 } });
    }
  });

  it("answers an unknown resource with -32602 naming the URI, and a missing Mcp-Method with -32020", async () => {
    const uri = "portfolio://operations/00000000-0000-4000-8000-000000000000/nothing";
    const unknown = await post(modernRequest(42, "resources/read", { uri }), {
      "mcp-method": "resources/read",
      "mcp-name": uri,
    });
    expect(unknown.message).toMatchObject({ id: 42, error: { code: -32602, data: { uri } } });
    const headerless = await post(modernRequest(43, "tools/list"));
    expect(headerless.status).toBe(400);
    expect(headerless.message).toMatchObject({ id: 43, error: { code: -32020 } });
  });

  it("discovers the server without a session, and keeps the id on a 2025 request without one", async () => {
    const discovered = await post(modernRequest(44, "server/discover"), {
      "mcp-method": "server/discover",
    });
    expect(discovered.message.id).toBe(44);
    expect(discovered.message.result).toMatchObject({
      supportedVersions: ["2026-07-28"],
      capabilities: { tools: {}, resources: {}, prompts: {} },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "portfolio-mcp" } },
    });
    const legacy = await post(JSON.stringify({ jsonrpc: "2.0", id: 45, method: "tools/list" }), {
      "mcp-protocol-version": "2025-11-25",
    });
    expect(legacy.status).toBe(400);
    expect(legacy.message).toMatchObject({ id: 45, error: { code: -32000 } });
  });
});
