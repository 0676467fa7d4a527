import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../src/http/errors.js";
import { clientFor } from "../helpers/api.js";
import { connectInMemory } from "../helpers/mcp.js";

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

describe("secrets stay secret", () => {
  it("never shows the secret, a signature or a bearer in logs, errors or business requests", async () => {
    const { api, logs } = clientFor(sandbox, { maxRetries: 1 }, { sleep: async () => {} });
    const wrong = clientFor(sandbox, { secret: "a-wrong-secret-value" });
    const errors: unknown[] = [];
    const attempt = (p: Promise<unknown>) => p.catch((e: unknown) => errors.push(e));
    const operationId = sandbox.control.state.data.operations[0]!.id;

    await attempt(api.call("operations_list", { query: { status: "active" } }));
    await attempt(api.call("custom_dashboard_create", { body: { name: "Secret-free" } }));
    sandbox.control.expireAllBearers();
    await attempt(api.call("me_get", {}));
    await attempt(api.call("operations_list", { query: { status: "nope" } }));
    sandbox.control.failNext(2, 503);
    await attempt(api.call("deals_list", {}));
    await attempt(
      api.call("operation_note_create", {
        path: { operation_id: operationId },
        body: { content: "" },
      }),
    );
    await attempt(wrong.api.call("taxonomies_get", {}));
    sandbox.control.expireAllBearers();
    sandbox.control.failNext(1, 401, { match: { kind: "read" } });
    await attempt(api.call("taxonomies_get", {}));
    await api.close();
    await wrong.api.close();

    const log = sandbox.control.requests();
    const exchanges = log.filter((e) => e.routeId === "auth_token");
    const signatures = exchanges.map((e) => (e.body as { signature: string }).signature);
    const bearers = [
      ...new Set(log.map((e) => e.headers.authorization?.replace(/^Bearer /, "")).filter(Boolean)),
    ] as string[];
    const secrets = [sandbox.credentials.secret, "a-wrong-secret-value"];
    expect(signatures.length).toBeGreaterThanOrEqual(4);
    expect(bearers.length).toBeGreaterThanOrEqual(3);
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(errors.every((e) => e instanceof ApiError)).toBe(true);

    const logText = logs.text() + wrong.logs.text();
    expect(logText).toContain("upstream call");
    const errorText = errors
      .map((e) => `${(e as Error).message} ${JSON.stringify(e)} ${(e as Error).stack}`)
      .join("\n");
    for (const value of [...secrets, ...signatures, ...bearers]) {
      expect(logText, "logs").not.toContain(value);
      expect(errorText, "errors").not.toContain(value);
    }

    for (const entry of log) {
      const { authorization, ...otherHeaders } = entry.headers;
      const visible = JSON.stringify({
        path: entry.path,
        query: entry.query,
        headers: otherHeaders,
      });
      const body = JSON.stringify(entry.body);
      for (const secret of secrets)
        expect(visible + body + (authorization ?? "")).not.toContain(secret);
      for (const bearer of bearers) expect(visible + body).not.toContain(bearer);
      if (entry.routeId !== "auth_token")
        for (const s of signatures) expect(visible + body).not.toContain(s);
    }
  });

  it("scrubs a gateway's echo of the request, bearer included, from what the model and the logs see", async () => {
    const mcp = await connectInMemory(sandbox, { settings: { maxRetries: 0 } });
    try {
      await mcp.client.callTool({ name: "list_deals", arguments: { limit: 1 } }); // signs in
      sandbox.control.addFault({
        count: 1,
        match: { routeId: "deals_list" },
        action: { type: "status", status: 400, echoRequest: true },
      });
      const mark = sandbox.control.mark();
      const reply = (await mcp.client.callTool({
        name: "list_deals",
        arguments: { limit: 1 },
      })) as { isError?: boolean; content: Array<{ text: string }> };
      const [echoed] = sandbox.control.requests({ since: mark, routeId: "deals_list" });
      const bearer = echoed!.headers.authorization!.replace(/^Bearer /, "");
      expect(reply.isError).toBe(true);
      expect(reply.content[0]!.text).toMatch(
        /^Bad request for list_deals: HTTP 400 without a problem document \(text\/plain: "Gateway error \(Authorization: Bearer \[redacted\] on GET \/v1\/deals/,
      );
      expect(reply.content[0]!.text).not.toContain(bearer);
      expect(mcp.logs.text()).not.toContain(bearer);
    } finally {
      await mcp.close();
    }
  });
});
