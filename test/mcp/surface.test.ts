import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOGUE } from "../../src/api/catalogue.js";
import { INVENTORY } from "../../src/inventory/index.js";
import { budget, MEASURED, report } from "../helpers/budgets.js";
import { connectInMemory } from "../helpers/mcp.js";

/**
 * The MCP surface is committed, one file per tool, resource template, resource and prompt under
 * test/snapshots/, so that every change to it is reviewed item by item.
 * `UPDATE_SNAPSHOTS=1 npm test` rewrites them on purpose; otherwise a missing, drifted or stale
 * file fails.
 */
const ROOT = new URL("../snapshots/", import.meta.url);
const UPDATE = process.env.UPDATE_SNAPSHOTS === "1";

let sandbox: Sandbox;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;

beforeAll(async () => {
  sandbox = await startSandbox();
  // The whole surface: curated tools and the generic ones the key's contract brings.
  mcp = await connectInMemory(sandbox, { writes: {}, contract: true });
});
afterAll(async () => {
  await mcp.close();
  await sandbox.close();
});

function compare(kind: string, items: Array<{ name: string }>) {
  const dir = new URL(`${kind}/`, ROOT);
  if (UPDATE) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  }
  for (const item of items) {
    const file = new URL(`${item.name}.json`, dir);
    const text = `${JSON.stringify(item, null, 2)}\n`;
    if (UPDATE) writeFileSync(file, text);
    expect(
      existsSync(file),
      `missing test/snapshots/${kind}/${item.name}.json: run UPDATE_SNAPSHOTS=1 npm test`,
    ).toBe(true);
    expect(
      JSON.parse(text),
      `${kind}/${item.name} changed: review it, then UPDATE_SNAPSHOTS=1 npm test`,
    ).toEqual(JSON.parse(readFileSync(file, "utf8")));
  }
  const stale = readdirSync(dir)
    .map((f) => f.replace(/\.json$/, ""))
    .filter((name) => !items.some((i) => i.name === name));
  expect(stale, `snapshots of ${kind} no longer offered: remove them`).toEqual([]);
}

describe("the MCP surface", () => {
  it("matches the snapshot of what only a client that renders MCP Apps is offered", async () => {
    const apps = await connectInMemory(sandbox, { writes: {}, contract: true, apps: true });
    try {
      const { tools } = await apps.client.listTools();
      const { resources } = await apps.client.listResources();
      compare("apps", [
        ...tools.filter((t) => t.name.startsWith("app_")),
        ...resources.filter((r) => r.uri.startsWith("ui://")),
      ]);
    } finally {
      await apps.close();
    }
  });

  it("matches the committed snapshot of each tool, resource template, resource and prompt", async () => {
    compare("tools", (await mcp.client.listTools()).tools);
    compare("resource-templates", (await mcp.client.listResourceTemplates()).resourceTemplates);
    const fixed = (await mcp.client.listResources()).resources.filter(
      (r) => !r.uri.startsWith("portfolio://operations/"),
    );
    compare("resources", fixed);
    compare("prompts", (await mcp.client.listPrompts()).prompts);
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

  it("derives each tool's readOnlyHint from the kinds of the operations it calls", () => {
    for (const tool of INVENTORY.tools) {
      const kinds = tool.operations.map((id) => CATALOGUE[id].kind);
      // The generic tools call no fixed operation: what they reach decides (a search reads).
      const reads = tool.reach
        ? tool.reach !== "write"
        : kinds.length > 0 && kinds.every((k) => k === "read");
      expect(
        tool.annotations.readOnlyHint,
        `${tool.name} calls ${tool.operations.join(", ")}`,
      ).toBe(reads);
      if (tool.kind === "draft" && tool.writes !== "offered")
        for (const id of tool.writes) expect(tool.operations, tool.name).toContain(id);
    }
  });

  it("stays small: few tools, short descriptions, a compact listing", async () => {
    const listing = await mcp.client.listTools();
    expect(listing.tools.length).toBeLessThanOrEqual(40);
    for (const tool of listing.tools)
      expect(tool.description?.length ?? 0, tool.name).toBeLessThanOrEqual(300);
    const bytes = JSON.stringify(listing).length;
    const line = report("tools/list", bytes, MEASURED.listingBytes);
    expect(bytes, line).toBeLessThanOrEqual(budget(MEASURED.listingBytes));
  });
});
