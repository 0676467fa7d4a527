import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { rawStdio, stopRawStdio } from "../helpers/raw-stdio.js";
import { type Served, serve, stopServed } from "../helpers/served.js";

/**
 * A stdio message over PORTFOLIO_MCP_MAX_BODY_BYTES is skipped as it streams. Its id used to be
 * looked for in its first 1024 bytes only, and the SDK's clients write `id` after `params`: a
 * large tools/call was never answered, and the client waited for its own timeout. The id is
 * now read wherever it comes; a message whose id cannot be read is told of once (stderr, and a
 * log notification where the protocol has them).
 */
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(() => Promise.all([stopServed(), stopRawStdio()]));
afterAll(() => sandbox.close());

const LIMIT = "65536";
const big = "x".repeat(100_000);
const within = <T>(ms: number, promise: Promise<T>) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms),
    ),
  ]);
const refusalOf = (promise: Promise<unknown>) =>
  within(5_000, promise).then(
    () => null,
    (error: Error & { code?: number }) => ({ code: error.code, message: error.message }),
  );

describe("an oversized stdio message", () => {
  for (const era of ["2025", "2026"] as const) {
    it(`sent by the SDK's ${era} client (its id after the params) is answered by its id at once`, async () => {
      const served = await serve(sandbox, {
        wire: "stdio",
        era,
        env: { PORTFOLIO_MCP_MAX_BODY_BYTES: LIMIT },
      });
      try {
        const refused = await refusalOf(served.callTool("list_operations", { name: big }));
        expect(refused?.code).toBe(-32600);
        expect(refused?.message).toMatch(/over this server's limit of 65536; it was not processed/);
        expect(
          (await within(5_000, served.callTool("list_deals", { limit: 1 }))).isError,
        ).toBeFalsy();
        expect(served.stderr()).toContain(
          "refused a message larger than PORTFOLIO_MCP_MAX_BODY_BYTES; the session goes on",
        );
      } finally {
        await served.close();
      }
    });
  }

  it("without an id (a 2025 session): told once, in a log notification and on stderr", async () => {
    const served = await serve(sandbox, {
      wire: "stdio",
      era: "2025",
      env: { PORTFOLIO_MCP_MAX_BODY_BYTES: LIMIT },
    });
    const logged: Array<{ level: string; data: unknown }> = [];
    const client = served.client as import("@modelcontextprotocol/sdk/client/index.js").Client;
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logged.push(n.params);
    });
    try {
      await client.notification({
        method: "notifications/cancelled",
        params: { requestId: 999, reason: big },
      });
      // Answered in order: once this ping is back, the notice would have come before it.
      await within(5_000, client.ping());
      await within(5_000, client.ping());
      expect(logged).toEqual([
        {
          level: "error",
          logger: "portfolio-mcp",
          data: expect.stringMatching(
            /^The message takes \d+ bytes, over this server's limit of 65536; it was not processed\. No id could be read from it, so no request is answered for it\.$/,
          ),
        },
      ]);
      expect(served.stderr()).toContain("whose id cannot be read; the session goes on");
    } finally {
      await served.close();
    }
  });

  it("without an id (a 2026 connection): on stderr only, nothing but answers on stdout", async () => {
    const served: Served = await serve(sandbox, {
      wire: "stdio",
      era: "2026",
      env: { PORTFOLIO_MCP_MAX_BODY_BYTES: LIMIT },
    });
    try {
      const client = served.client as import("@modelcontextprotocol/client").Client;
      const notices: unknown[] = [];
      client.fallbackNotificationHandler = async (n) => {
        notices.push(n);
      };
      await client.notification({
        method: "notifications/cancelled",
        params: { requestId: 999, reason: big },
      });
      expect(
        (await within(5_000, served.callTool("list_deals", { limit: 1 }))).isError,
      ).toBeFalsy();
      expect(served.stderr()).toContain("whose id cannot be read; the session goes on");
      expect(notices).toEqual([]);
    } finally {
      await served.close();
    }
  });

  it("answers by the top-level id, never one nested in the params before it", async () => {
    const server = rawStdio(sandbox, { PORTFOLIO_MCP_MAX_BODY_BYTES: LIMIT });
    try {
      await server.initialize();
      server.send({
        jsonrpc: "2.0",
        method: "tools/call",
        params: { name: "list_operations", arguments: { id: 7, name: big }, _meta: { id: 8 } },
        id: "late-9",
      });
      const refused = await within(
        5_000,
        server.next((m) => m.id === "late-9"),
      );
      expect(refused.error.code).toBe(-32600);
      // An id too long to read: told once, answered by nothing.
      server.send({
        jsonrpc: "2.0",
        method: "tools/call",
        params: { pad: big },
        id: "z".repeat(400),
      });
      const notice = await within(
        5_000,
        server.next((m) => m.method === "notifications/message"),
      );
      expect(notice.params.data).toContain("No id could be read from it");
      server.send({ jsonrpc: "2.0", id: 3, method: "ping" });
      await within(
        5_000,
        server.next((m) => m.id === 3),
      );
      expect(server.all().filter((m) => m.id === 7 || m.id === 8)).toEqual([]);
      expect(server.all().filter((m) => m.method === "notifications/message")).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  it("an oversized answer to the confirmation form settles it at once as a refusal, and sends nothing", async () => {
    const server = rawStdio(sandbox, {
      PORTFOLIO_CONFIRM: "elicitation",
      PORTFOLIO_MCP_MAX_BODY_BYTES: LIMIT,
    });
    try {
      await server.initialize({ elicitation: { form: {} } });
      const mark = sandbox.control.mark();
      server.send({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "create_custom_dashboard", arguments: { name: "Réponse énorme" } },
      });
      const ask = await server.next((m) => m.method === "elicitation/create");
      server.send({
        jsonrpc: "2.0",
        result: { action: "accept", content: { confirm: true, pad: big } },
        id: ask.id,
      });
      const reply = await within(
        5_000,
        server.next((m) => m.id === 5),
      );
      expect(reply.result.structuredContent).toMatchObject({ status: "cancelled" });
      expect(
        sandbox.control.requests({ since: mark }).filter((e) => e.method !== "GET"),
      ).toHaveLength(0);
      // Our request was settled inside; the client's oversized answer got no answer back.
      expect(server.all().filter((m) => m.id === ask.id && m.error)).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
