import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

/** The built server over stdio, spoken to in raw JSON-RPC: what no SDK client would send. */
function rawStdio(env: Record<string, string> = {}) {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  );
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI], {
    env: {
      ...base,
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
      PORTFOLIO_API_SECRET: sandbox.credentials.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: sandbox.credentials.delegatedUserEmail,
      PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "stdio-hostile-")),
      PORTFOLIO_LOG_LEVEL: "warn",
      ...env,
    },
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  const messages: any[] = [];
  const waiters: Array<{ match: (m: any) => boolean; resolve: (m: any) => void }> = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line);
    const waiter = waiters.find((w) => w.match(message));
    if (waiter) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(message);
    } else messages.push(message);
  });
  const next = (match: (m: any) => boolean) =>
    new Promise<any>((resolve) => {
      const seen = messages.find(match);
      if (seen) {
        messages.splice(messages.indexOf(seen), 1);
        resolve(seen);
      } else waiters.push({ match, resolve });
    });
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  return {
    child,
    send,
    next,
    stderr: () => stderr,
    async initialize(capabilities: object = {}) {
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities,
          clientInfo: { name: "stdio-hostile", version: "1" },
        },
      });
      await next((m) => m.id === 1);
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
    },
    async stop() {
      child.kill("SIGTERM");
      if (child.exitCode === null) await once(child, "exit");
    },
  };
}

describe("stdio under hostile input", () => {
  it("refuses a message over the size limit by its id, logs it, and keeps the session", async () => {
    const server = rawStdio({ PORTFOLIO_MCP_MAX_BODY_BYTES: "65536" });
    try {
      await server.initialize();
      server.send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "list_operations", arguments: { name: "x".repeat(11 * 1024 * 1024) } },
      });
      const refused = await server.next((m) => m.id === 2);
      expect(refused.error).toEqual({
        code: -32600,
        message: expect.stringMatching(
          /^The message takes \d+ bytes, over this server's limit of 65536; it was not processed\.$/,
        ),
      });
      server.send({ jsonrpc: "2.0", id: 3, method: "ping" });
      expect(await server.next((m) => m.id === 3)).toMatchObject({ result: {} });
      expect(server.stderr()).toContain(
        "refused a message larger than PORTFOLIO_MCP_MAX_BODY_BYTES",
      );
      expect(server.child.exitCode).toBeNull();
    } finally {
      await server.stop();
    }
  });

  it("takes a malformed answer to its confirmation form as a refusal at once, and sends nothing", async () => {
    const server = rawStdio({ PORTFOLIO_CONFIRM: "elicitation" });
    try {
      await server.initialize({ elicitation: { form: {} } });
      const mark = sandbox.control.mark();
      const started = Date.now();
      server.send({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "create_custom_dashboard", arguments: { name: "Réponse tordue" } },
      });
      const ask = await server.next((m) => m.method === "elicitation/create");
      server.send({ jsonrpc: "2.0", id: ask.id, result: "yes, please" }); // not a result object
      const reply = await server.next((m) => m.id === 5);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(reply.result.structuredContent).toMatchObject({
        status: "cancelled",
        message: "The user did not confirm; nothing was written.",
      });
      expect(
        sandbox.control.requests({ since: mark }).filter((e) => e.method !== "GET"),
      ).toHaveLength(0);
    } finally {
      await server.stop();
    }
  });
});
