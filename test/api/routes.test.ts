import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CATALOGUE } from "../../src/api/catalogue.js";
import { pathProblem, RoutesFileError, resolveRoutes } from "../../src/api/routes.js";

const dir = mkdtempSync(join(tmpdir(), "routes-"));
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

describe("the catalogue", () => {
  it("declares read or write explicitly, not from the method", () => {
    expect(CATALOGUE.workflow_recommendations_preview).toMatchObject({
      method: "POST",
      kind: "read",
      scope: "workflows:read",
    });
    for (const [id, op] of Object.entries(CATALOGUE)) {
      expect(op.scope.endsWith(op.kind === "read" ? ":read" : ":write"), id).toBe(true);
      expect(op.capability !== null, id).toBe(op.path.startsWith("/users/me"));
    }
  });
});

describe("PORTFOLIO_ROUTES_FILE", () => {
  it("replaces methods and paths by operation id and keeps the rest", () => {
    const routes = resolveRoutes(
      file(
        "ok.json",
        JSON.stringify({ deal_get: { method: "GET", path: "/crm/deals/{deal_id}" } }),
      ),
    );
    expect(routes.get("deal_get")).toMatchObject({
      method: "GET",
      path: "/crm/deals/{deal_id}",
      scope: "deals:read",
      kind: "read",
    });
    expect(routes.get("deals_list")?.path).toBe("/deals");
    expect(resolveRoutes(null).get("deal_get")?.path).toBe("/deals/{deal_id}");
  });

  it.each([
    [
      "unknown id",
      { deals_get: { method: "GET", path: "/deals/{deal_id}" } },
      "unknown operation id deals_get",
    ],
    [
      "missing placeholder",
      { deal_get: { method: "GET", path: "/deals" } },
      "must use the placeholders {deal_id}",
    ],
    [
      "other placeholder",
      { deal_get: { method: "GET", path: "/deals/{id}" } },
      "must use the placeholders {deal_id}",
    ],
    [
      "relative path",
      { deal_get: { method: "GET", path: "deals/{deal_id}" } },
      "must start with /",
    ],
    [
      "dot segment",
      { deal_get: { method: "GET", path: "/x/../deals/{deal_id}" } },
      "must not contain empty, . or .. segments",
    ],
    [
      "query string",
      { deals_list: { method: "GET", path: "/deals?x=1" } },
      "must not contain a query",
    ],
    [
      "partial placeholder",
      { deal_get: { method: "GET", path: "/deals/id-{deal_id}" } },
      "whole-segment placeholders",
    ],
    ["bad method", { deal_get: { method: "FETCH", path: "/deals/{deal_id}" } }, "deal_get.method"],
    [
      "extra field",
      { deal_get: { method: "GET", path: "/deals/{deal_id}", scope: "x" } },
      "deal_get",
    ],
  ])("refuses a %s at startup", (_case, content, message) => {
    const run = () => resolveRoutes(file(`${_case}.json`, JSON.stringify(content)));
    expect(run).toThrow(RoutesFileError);
    expect(run).toThrow(message);
  });

  it("refuses a file that is not JSON or does not exist", () => {
    expect(() => resolveRoutes(file("bad.json", "{ nope"))).toThrow("cannot be read as JSON");
    expect(() => resolveRoutes(join(dir, "missing.json"))).toThrow("PORTFOLIO_ROUTES_FILE");
  });

  it("judges path templates on their own", () => {
    expect(pathProblem("/operations/{operation_id}/notes", ["operation_id"])).toBeNull();
    expect(pathProblem("//operations", [])).toContain("empty");
  });
});
