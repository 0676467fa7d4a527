import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DEMO_KEYS, type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVENTORY } from "../../src/inventory/index.js";
import { initializeRequest } from "../helpers/raw.js";

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  ) as Record<string, string>;

async function connectStdio(args: string[], env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...args],
    env: { ...cleanEnv(), ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "stdio-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

describe("stdio with --sandbox", () => {
  it("serves the tools, and list_operations status=active returns the active operations", async () => {
    const { client, stderr } = await connectStdio(["--sandbox"]);
    try {
      expect(client.getServerVersion()?.name).toBe("portfolio-mcp");
      expect(client.getInstructions()).toContain("list_operations");
      const { tools } = await client.listTools();
      // The curated tools, the two-step pair, and the three that reach the rest of the contract.
      expect(tools).toHaveLength(INVENTORY.tools.filter((t) => t.settles !== "app").length);
      const reply = (await client.callTool({
        name: "list_operations",
        arguments: { status: "active", limit: 200 },
      })) as any;
      expect(reply.structuredContent.total).toBe(54);
      expect(
        reply.structuredContent.items.every((o: any) =>
          ["sourcing", "instruction", "travaux", "commercialisation", "livraison"].includes(
            o.status,
          ),
        ),
      ).toBe(true);
      const resource = await client.readResource({ uri: "portfolio://overview" });
      expect(JSON.parse((resource.contents[0] as { text: string }).text).totals.operations).toBe(
        72,
      );
      expect(stderr()).toContain('"msg":"upstream call"');
    } finally {
      await client.close();
    }
  });

  it("writes nothing but JSON-RPC on stdout", async () => {
    const child = spawn(process.execPath, [CLI, "--sandbox"], {
      env: { ...cleanEnv(), PORTFOLIO_LOG_LEVEL: "debug" },
    });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on("line", (line) => lines.push(line));
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send(initializeRequest);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "list_deals", arguments: { limit: 2 } },
    });
    send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "get_deal", arguments: { deal_id: "nope" } },
    });
    while (lines.length < 3) await new Promise((r) => setTimeout(r, 20));
    child.stdin.end();
    await once(child, "exit");
    const replies = new Map(lines.map((line) => JSON.parse(line)).map((m) => [m.id, m]));
    for (const line of lines) expect(JSON.parse(line).jsonrpc).toBe("2.0");
    expect(replies.get(2).result.structuredContent.items).toHaveLength(2);
    expect(replies.get(3).result.isError).toBe(true);
  });
});

describe("stdio with PORTFOLIO_ALLOW_SENSITIVE", () => {
  it("offers the sensitive operations it lists, and only those", async () => {
    const { client } = await connectStdio(["--sandbox"], { PORTFOLIO_ALLOW_SENSITIVE: "calendar" });
    const call = async (name: string, args: object) =>
      (await client.callTool({ name, arguments: args as Record<string, unknown> })) as any;
    try {
      const events = await call("list_calendar_events", { limit: 1 });
      const draft = await call("draft_api_write", {
        operation: "calendar_event_delete",
        path: { event_id: events.structuredContent.items[0].id },
      });
      expect(draft.isError, draft.content[0].text).toBeFalsy();
      expect(draft.structuredContent.status).toBe("awaiting_confirmation");
      const cancelled = await call("cancel_write", {
        confirmation_id: draft.structuredContent.confirmation_id,
      });
      expect(cancelled.structuredContent.status).toBe("cancelled");
      const unlisted = await call("draft_api_write", {
        operation: "task_delete",
        path: { task_id: "00000000-0000-0000-0000-000000000000" },
      });
      expect(unlisted.isError).toBe(true);
      expect(unlisted.content[0].text).toBe(
        "task_delete is not offered here: a deletion: offered only when PORTFOLIO_ALLOW_SENSITIVE lists task_delete or tasks (nothing was drafted).",
      );
    } finally {
      await client.close();
    }
  });
});

describe("stdio against a configured API", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox.close());

  it("uses the PORTFOLIO_API_* configuration, and refuses what the key cannot do", async () => {
    const { client } = await connectStdio([], {
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: DEMO_KEYS.readOnly.keyId,
      PORTFOLIO_API_SECRET: DEMO_KEYS.readOnly.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: "julien.bernard@aurore-capital.example",
    });
    try {
      const me = (await client.callTool({ name: "get_my_profile", arguments: {} })) as any;
      expect(me.structuredContent.id).toBe("usr_julien_bernard");
      expect(sandbox.control.requests({ routeId: "auth_token" }).at(-1)?.body).toMatchObject({
        key_id: "sandboxreadonly",
      });
    } finally {
      await client.close();
    }
  });

  it("stops at startup with one line naming a missing or wrong variable", () => {
    const missing = spawnSync(process.execPath, [CLI], {
      env: cleanEnv(),
      encoding: "utf8",
      input: "",
    });
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
    expect(missing.stderr).toContain("PORTFOLIO_API_BASE_URL: is required");
    const wrong = spawnSync(process.execPath, [CLI], {
      env: {
        ...cleanEnv(),
        PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
        PORTFOLIO_API_KEY_ID: "BAD",
        PORTFOLIO_API_SECRET: "x",
      },
      encoding: "utf8",
      input: "",
    });
    expect(wrong.stderr).toBe(
      "portfolio-mcp: PORTFOLIO_API_KEY_ID: must be 4 to 24 lowercase letters or digits\n",
    );
  });
});
