import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVENTORY } from "../../src/inventory/index.js";
import { connectInMemory } from "../helpers/mcp.js";
import { connectModern } from "../helpers/modern.js";

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

describe("a 2026-07-28 client", () => {
  it("reads tools, resources, prompts and completions, with cache hints on listings", async () => {
    const session = await connectModern(sandbox);
    try {
      expect(session.client.getProtocolEra()).toBe("modern");
      expect(session.client.getServerVersion()).toMatchObject({
        name: "portfolio-mcp",
        icons: [expect.objectContaining({ mimeType: "image/svg+xml" })],
      });
      const listed = (await session.client.request({ method: "tools/list", params: {} })) as any;
      // The curated tools and the two-step pair: no contract, so no long tail.
      expect(listed.tools).toHaveLength(
        INVENTORY.tools.filter((t) => !t.reach && t.settles !== "app").length,
      );
      expect(listed).toMatchObject({ ttlMs: 300_000, cacheScope: "private" });
      const active = (await session.client.callTool({
        name: "list_operations",
        arguments: { status: "active", limit: 3 },
      })) as any;
      expect(active.structuredContent.total).toBe(54);
      const overview = await session.client.readResource({ uri: "portfolio://overview" });
      expect(JSON.parse((overview.contents[0] as { text: string }).text).totals.operations).toBe(
        72,
      );
      await expect(
        session.client.readResource({ uri: "portfolio://nowhere" }),
      ).rejects.toMatchObject({ code: -32602, data: { uri: "portfolio://nowhere" } });
      const review = await session.client.getPrompt({ name: "portfolio_review", arguments: {} });
      expect(review.messages).toHaveLength(1);
      const completed = await session.client.complete({
        ref: { type: "ref/prompt", name: "operation_brief" },
        argument: { name: "operation_id", value: "terrasses saint" },
      });
      expect(completed.completion.values.length).toBe(2);
    } finally {
      await session.close();
    }
  });
});

/**
 * A client allowed one tool sees nothing else through any method: not the other tools, not the
 * resources they back, not the prompts that rely on them, not their completions.
 */
describe.each([
  ["2025-11-25", (allowed: string[]) => connectInMemory(sandbox, { allowedTools: allowed })],
  ["2026-07-28", (allowed: string[]) => connectModern(sandbox, { allowedTools: allowed })],
] as const)("a client allowed only list_my_dashboards (%s)", (_era, connect) => {
  it("sees nothing outside its allowlist through any method", async () => {
    const session = await connect(["list_my_dashboards"]);
    const { client } = session as { client: any };
    try {
      expect((await client.listTools()).tools.map((t: { name: string }) => t.name)).toEqual([
        "list_my_dashboards",
      ]);
      expect((await client.listResources()).resources.map((r: { uri: string }) => r.uri)).toEqual([
        "portfolio://me/custom-dashboards",
      ]);
      expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
      expect((await client.listPrompts()).prompts).toEqual([]);
      const operation = sandbox.control.state.data.operations[0]!;
      const mark = sandbox.control.mark();
      await expect(
        client.readResource({ uri: `portfolio://operations/${operation.id}` }),
      ).rejects.toMatchObject({ code: -32602 });
      await expect(
        client.getPrompt({ name: "operation_brief", arguments: { operation_id: operation.id } }),
      ).rejects.toMatchObject({ code: -32602 });
      await expect(
        client.complete({
          ref: { type: "ref/resource", uri: "portfolio://operations/{operation_id}" },
          argument: { name: "operation_id", value: "Les" },
        }),
      ).rejects.toMatchObject({ code: -32602 });
      await expect(
        client.callTool({ name: "get_operation", arguments: { operation_id: operation.id } }),
      ).rejects.toMatchObject({ code: -32602 });
      // Refused before anything reached the API.
      expect(sandbox.control.requests({ since: mark })).toEqual([]);
      const mine = await client.readResource({ uri: "portfolio://me/custom-dashboards" });
      expect(JSON.parse(mine.contents[0].text).items.length).toBeGreaterThan(0);
    } finally {
      await session.close();
    }
  });
});
