import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { normaliseContract, readContractFile } from "../../src/api/contract/load.js";

/**
 * The key's contract export, normalised once at startup: what each operation comes to; a
 * malformed operation left out with a warning naming it; one sentence when the document itself
 * cannot be used.
 */
const FULL = readFileSync(new URL("../snapshots/contract-full.json", import.meta.url), "utf8");
const exported = () => JSON.parse(FULL) as any;
const normalise = (document: unknown) => normaliseContract(document, "the export");
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  ) as Record<string, string>;

describe("normalising the export", () => {
  it("reads every operation with its kind from the scope, never from the verb", () => {
    const contract = normalise(exported());
    // 158 less the token exchange, which needs no bearer: the server makes it itself.
    expect(contract.operations.size).toBe(157);
    expect(contract.operations.has("auth_token")).toBe(false);
    expect(contract.families.size).toBeGreaterThanOrEqual(21);
    const preview = contract.operations.get("workflow_recommendations_preview")!;
    expect(preview).toMatchObject({ method: "POST", kind: "read" });
    expect(contract.operations.get("alert_acknowledge")).toMatchObject({
      method: "POST",
      path: "/alerts/{alert_id}/acknowledge",
      scope: "alerts:write",
      kind: "write",
      family: "alerts",
      capability: null,
    });
    // Headers the server owns are not parameters the model gives.
    for (const op of contract.operations.values())
      for (const p of [...op.pathParameters, ...op.queryParameters])
        expect(p.name).not.toMatch(/^(Authorization|Idempotency-Key|X-Request-ID)$/i);
  });

  it("takes the scope from the security requirement's roles when x-scope is absent", () => {
    const document = exported();
    const op = document.paths["/alerts/{alert_id}/acknowledge"].post;
    delete op["x-scope"];
    op.security = [{ partnerBearer: ["alerts:write"] }];
    expect(normalise(document).operations.get("alert_acknowledge")).toMatchObject({
      scope: "alerts:write",
      kind: "write",
    });
  });

  it("counts an operation whose scope is not a read as a write", () => {
    const document = exported();
    document.paths["/alerts"].get["x-scope"] = "alerts:admin";
    expect(normalise(document).operations.get("alerts_list")?.kind).toBe("write");
  });

  it("takes the delegated capability from x-delegation, else from the spec's table", () => {
    const document = exported();
    const operations = normalise(document).operations;
    const delegated = [...operations.values()].filter((op) => op.capability !== null);
    expect(delegated.length).toBeGreaterThan(0);
    for (const op of delegated) expect(op.path).toMatch(/^\/users\/me(\/|$)/);
  });

  it.each([
    [null, "the export: not an OpenAPI document (expected a JSON object)."],
    [
      { openapi: "2.0", paths: {} },
      'the export: expected an OpenAPI 3.x document, found openapi: "2.0".',
    ],
    [{ openapi: "3.1.0" }, "the export: has no paths."],
  ])("refuses %j in one sentence", (document, message) => {
    expect(() => normalise(document)).toThrow(message);
  });

  it.each([
    [
      "an operation without an id",
      (d: any) => delete d.paths["/alerts"].get.operationId,
      "alerts_list",
      "the export: GET /alerts left out: it has no usable operationId (letters, digits and _ . -, at most 128); the rest of the contract is served.",
    ],
    [
      "an id used twice",
      (d: any) => {
        d.paths["/alerts/{alert_id}"].get.operationId = "alerts_list";
      },
      "alert_get",
      "the export: operation alerts_list (GET /alerts/{alert_id}) left out: its operationId is already used by GET /alerts; the rest of the contract is served.",
    ],
    [
      "a placeholder with no parameter",
      (d: any) => {
        d.paths["/alerts/{alert_id}/{extra}"] = d.paths["/alerts/{alert_id}"];
        delete d.paths["/alerts/{alert_id}"];
      },
      "alert_get",
      "the export: operation alert_get (GET /alerts/{alert_id}/{extra}) left out: its path uses {extra} with no path parameter; the rest of the contract is served.",
    ],
  ])("leaves out %s with a warning naming it, and keeps the rest", (_, mutate, gone, warning) => {
    const document = exported();
    mutate(document);
    const contract = normalise(document);
    expect(contract.warnings).toEqual([warning]);
    expect(contract.operations.has(gone)).toBe(false);
    expect(contract.operations.size).toBe(156);
  });

  it("takes an operation without a scope as a write, with a warning naming it", () => {
    const document = exported();
    const op = document.paths["/alerts"].get;
    delete op["x-scope"];
    op.security = [{ partnerBearer: [] }];
    const contract = normalise(document);
    expect(contract.operations.get("alerts_list")).toMatchObject({ kind: "write" });
    expect(contract.warnings).toEqual([
      "the export: operation alerts_list (GET /alerts): names no scope (x-scope, or a role in its security requirement); it is served as a write, confirmed by a person before it is sent.",
    ]);
  });

  it("reads YAML as well as JSON", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "contract-")), "contract.yaml");
    writeFileSync(file, stringify(exported()));
    const contract = await readContractFile(file);
    expect(contract.operations.size).toBe(157);
    expect(contract.source).toBe(`PORTFOLIO_CONTRACT_FILE (${file})`);
  });
});

describe("a contract with flaws, at startup", () => {
  it("starts, serves the rest, and warns naming the unscoped and the malformed operation", async () => {
    const document = exported();
    delete document.paths["/alerts"].get.operationId;
    const unscoped = document.paths["/tasks/board"].get;
    delete unscoped["x-scope"];
    unscoped.security = [{ partnerBearer: [] }];
    const file = join(mkdtempSync(join(tmpdir(), "contract-")), "contract.json");
    writeFileSync(file, JSON.stringify(document));
    const client = new Client({ name: "flawed-contract", version: "1.0.0" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "--sandbox", "--contract-file", file],
      env: { ...cleanEnv(), PORTFOLIO_LOG_LEVEL: "warn" },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    await client.connect(transport);
    try {
      const found = (await client.callTool({
        name: "find_api_operations",
        arguments: { query: "the kanban board of tasks" },
      })) as any;
      expect(found.structuredContent.operations[0]).toMatchObject({
        id: "tasks_board",
        kind: "write",
      });
      const listed = (await client.callTool({
        name: "list_operations",
        arguments: { limit: 1 },
      })) as any;
      expect(listed.structuredContent.items).toHaveLength(1);
      // The operation left out is not offered: its curated tool is not listed.
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).not.toContain("list_alerts");
      expect(stderr).toContain("GET /alerts left out: it has no usable operationId");
      expect(stderr).toContain(
        "operation tasks_board (GET /tasks/board): names no scope (x-scope, or a role in its security requirement); it is served as a write",
      );
    } finally {
      await client.close();
    }
  });

  it("stops only when the file cannot be read as a contract, in one line", () => {
    const file = join(mkdtempSync(join(tmpdir(), "contract-")), "contract.json");
    writeFileSync(file, JSON.stringify({ openapi: "3.1.0" }));
    const result = spawnSync(process.execPath, [CLI, "--sandbox", "--contract-file", file], {
      encoding: "utf8",
      input: "",
      timeout: 20_000,
    });
    expect(result.status).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim()).toBe(
      `portfolio-mcp: PORTFOLIO_CONTRACT_FILE (${file}): has no paths.`,
    );
  });
});
