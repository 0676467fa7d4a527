import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { connectInMemory } from "../helpers/mcp.js";

/**
 * The MCP surface (tools, resource templates, prompts) is committed in test/snapshots so that
 * every change to it is reviewed. `UPDATE_SNAPSHOTS=1 npm test` rewrites the file on purpose.
 */
const SNAPSHOT = new URL("../snapshots/mcp-surface.json", import.meta.url);

let sandbox: Sandbox;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;

beforeAll(async () => {
  sandbox = await startSandbox();
  mcp = await connectInMemory(sandbox, { writes: {} });
});
afterAll(async () => {
  await mcp.close();
  await sandbox.close();
});

describe("the MCP surface", () => {
  it("matches the committed snapshot", async () => {
    const surface = {
      tools: (await mcp.client.listTools()).tools,
      resourceTemplates: (await mcp.client.listResourceTemplates()).resourceTemplates,
      prompts: (await mcp.client.listPrompts()).prompts,
    };
    const text = `${JSON.stringify(surface, null, 2)}\n`;
    if (process.env.UPDATE_SNAPSHOTS === "1") writeFileSync(SNAPSHOT, text);
    expect(
      existsSync(SNAPSHOT),
      "missing test/snapshots/mcp-surface.json: run UPDATE_SNAPSHOTS=1 npm test",
    ).toBe(true);
    expect(
      JSON.parse(text),
      "the MCP surface changed: review it, then UPDATE_SNAPSHOTS=1 npm test",
    ).toEqual(JSON.parse(readFileSync(SNAPSHOT, "utf8")));
  });

  it("declares all four annotations on every tool, consistently with what the tool does", async () => {
    const { tools } = await mcp.client.listTools();
    for (const tool of tools) {
      const a = tool.annotations ?? {};
      for (const hint of [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
      ] as const) {
        expect(typeof a[hint], `${tool.name}.${hint}`).toBe("boolean");
      }
      if (a.readOnlyHint)
        expect(a.destructiveHint, `${tool.name} is read-only yet destructive`).toBe(false);
    }
  });

  it("stays small: few tools, short descriptions, a compact listing", async () => {
    const listing = await mcp.client.listTools();
    expect(listing.tools.length).toBeLessThanOrEqual(40);
    for (const tool of listing.tools)
      expect(tool.description?.length ?? 0, tool.name).toBeLessThanOrEqual(300);
    expect(JSON.stringify(listing).length).toBeLessThanOrEqual(32_000);
  });
});
