import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawStdio } from "../helpers/raw-stdio.js";

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

describe("stdio under hostile input", () => {
  it("refuses a message over the size limit by its id, logs it, and keeps the session", async () => {
    const server = rawStdio(sandbox, { PORTFOLIO_MCP_MAX_BODY_BYTES: "65536" });
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
    const server = rawStdio(sandbox, { PORTFOLIO_CONFIRM: "elicitation" });
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
