import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory } from "../helpers/mcp.js";

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(() => sandbox.control.clearFaults());
afterAll(() => sandbox.close());

type Reply = { structuredContent: any; isError?: boolean; content: Array<{ text: string }> };

/**
 * The API's 409 for a key still being processed, provoked as it happens: the first attempt is
 * slow (held after its key is recorded), our client times out and retries with the same key,
 * and the retry meets the first attempt still in progress.
 */
async function slowWrite(maxRetries: number, holdMs: number, name: string) {
  const session = await connectInMemory(sandbox, {
    writes: {},
    settings: { timeoutMs: 1_000, maxRetries },
  });
  const draft = (await session.client.callTool({
    name: "create_custom_dashboard",
    arguments: { name },
  })) as Reply;
  sandbox.control.hold(holdMs, { count: 1, match: { routeId: "custom_dashboard_create" } });
  const mark = sandbox.control.mark();
  const confirm = async () =>
    (await session.client.callTool({
      name: "confirm_write",
      arguments: { confirmation_id: draft.structuredContent.confirmation_id },
    })) as Reply;
  return {
    session,
    confirm,
    mark,
    created: () => sandbox.control.state.data.dashboards.filter((d) => d.name === name),
  };
}

const attemptsSince = (mark: number) =>
  sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" });

describe("a write whose key is still in progress upstream", () => {
  it("is retried after Retry-After with the same key, and succeeds once", async () => {
    // undici's timers have a one-second grain: the first attempt gives up after 1 to 2 s.
    const t = await slowWrite(6, 3_000, "Lent mais unique");
    try {
      const done = await t.confirm();
      expect(done.structuredContent.status).toBe("succeeded");
      const attempts = attemptsSince(t.mark);
      expect(attempts.map((e) => e.status)).toContain(409);
      expect(new Set(attempts.map((e) => e.headers["idempotency-key"])).size).toBe(1);
      expect(t.created()).toHaveLength(1);
    } finally {
      await t.session.close();
    }
  });

  it("is left uncertain, never failed, when retries run out, and the next confirmation finishes it", async () => {
    const t = await slowWrite(1, 4_000, "En cours, pas en échec");
    try {
      const first = await t.confirm();
      expect(first.isError).toBeFalsy();
      expect(first.structuredContent.status).toBe("uncertain");
      expect(attemptsSince(t.mark).map((e) => e.status)).toContain(409);
      while (t.created().length === 0) await new Promise((r) => setTimeout(r, 50)); // held one lands
      const second = await t.confirm();
      expect(second.structuredContent.status).toBe("succeeded");
      expect(new Set(attemptsSince(t.mark).map((e) => e.headers["idempotency-key"])).size).toBe(1);
      expect(t.created()).toHaveLength(1);
    } finally {
      await t.session.close();
    }
  });
});
