import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { normaliseContract, readContractFile } from "../../src/api/contract/load.js";

/**
 * The key's contract export, normalised once at startup: what each operation comes to, and one
 * sentence naming the operation and the problem when the document cannot be used.
 */
const FULL = readFileSync(new URL("../snapshots/contract-full.json", import.meta.url), "utf8");
const exported = () => JSON.parse(FULL) as any;
const normalise = (document: unknown) => normaliseContract(document, "the export");
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

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
      "the export: GET /alerts has no usable operationId (letters, digits and _ . -, at most 128).",
    ],
    [
      "an id used twice",
      (d: any) => {
        d.paths["/alerts/{alert_id}"].get.operationId = "alerts_list";
      },
      "the export: operationId alerts_list is used twice (GET /alerts/{alert_id} and another).",
    ],
    [
      "a placeholder with no parameter",
      (d: any) => {
        d.paths["/alerts/{alert_id}/{extra}"] = d.paths["/alerts/{alert_id}"];
        delete d.paths["/alerts/{alert_id}"];
      },
      "the export: operation alert_get (GET /alerts/{alert_id}/{extra}): its path uses {extra} with no path parameter.",
    ],
    [
      "an operation without a scope",
      (d: any) => {
        const op = d.paths["/alerts"].get;
        delete op["x-scope"];
        op.security = [{ partnerBearer: [] }];
      },
      "the export: operation alerts_list (GET /alerts): names no scope (x-scope, or a role in its security requirement).",
    ],
  ])("refuses %s, naming the operation", (_, mutate, message) => {
    const document = exported();
    mutate(document);
    expect(() => normalise(document)).toThrow(message);
  });

  it("reads YAML as well as JSON", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "contract-")), "contract.yaml");
    writeFileSync(file, stringify(exported()));
    const contract = await readContractFile(file);
    expect(contract.operations.size).toBe(157);
    expect(contract.source).toBe(`PORTFOLIO_CONTRACT_FILE (${file})`);
  });
});

describe("a malformed contract at startup", () => {
  it("stops the server with one line naming the operation and the problem", () => {
    const document = exported();
    delete document.paths["/alerts"].get.operationId;
    const file = join(mkdtempSync(join(tmpdir(), "contract-")), "contract.json");
    writeFileSync(file, JSON.stringify(document));
    const result = spawnSync(process.execPath, [CLI, "--sandbox", "--contract-file", file], {
      encoding: "utf8",
      input: "",
      timeout: 20_000,
    });
    expect(result.status).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(
      `PORTFOLIO_CONTRACT_FILE (${file}): GET /alerts has no usable operationId`,
    );
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });
});
