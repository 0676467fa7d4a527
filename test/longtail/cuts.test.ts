import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory } from "../helpers/mcp.js";

/** What the output budget cuts stays reachable, and keeps its types. */
let sandbox: Sandbox;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  mcp = await connectInMemory(sandbox, { contract: true });
});
afterAll(async () => {
  await mcp.close();
  await sandbox.close();
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await mcp.client.callTool({ name, arguments: args })) as any;

describe("cuts that stay reachable", () => {
  it("a board over the budget keeps every column, shortens the items in each, and names its filters", async () => {
    const board = await call("call_api_read", {
      operation: "tasks_board",
      query: JSON.stringify({ limit: 100 }),
    });
    const { result, note } = board.structuredContent;
    expect(result.columns.map((c: any) => c.status)).toEqual([
      "todo",
      "in_progress",
      "blocked",
      "done",
    ]);
    if (note) {
      expect(note).toMatch(/Narrow the query with operation_id, assignee_id, label_id, limit/);
      for (const column of result.columns) expect(column.items.length).toBeGreaterThan(0);
    }
  });

  it("long-tail list rows keep nested values as values, never placeholder strings", async () => {
    const documents = await call("call_api_read", {
      operation: "documents_list",
      query: JSON.stringify({ limit: 20 }),
    });
    for (const item of documents.structuredContent.items)
      for (const value of Object.values(item))
        expect(String(value)).not.toMatch(/^\[\d+ items\]$|^\{\d+ fields\}$/);
    const withAttachments = documents.structuredContent.items.find(
      (d: any) => Array.isArray(d.attachments) && d.attachments.length > 0,
    );
    expect(typeof withAttachments.attachments[0]).toBe("object");
  });
});
