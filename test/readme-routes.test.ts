import { readFileSync } from "node:fs";
import { ROUTES } from "@portfolio-mcp/sandbox";
import { routeTable, withRouteTable } from "@portfolio-mcp/sandbox/contract/readme";
import { EXCHANGE_OPERATION } from "@portfolio-mcp/sandbox/tokens";
import { describe, expect, it } from "vitest";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const served = [EXCHANGE_OPERATION, ...ROUTES];

describe("the README's route table", () => {
  it("is what npm run readme:routes writes from the sandbox's route table", () => {
    expect(
      withRouteTable(readme, routeTable(served)) === readme,
      "README.md's route table is behind the sandbox: run npm run readme:routes",
    ).toBe(true);
  });

  it("has one row per served operation, in the contract's order", () => {
    const table = routeTable(served);
    const ids = table
      .split("\n")
      .slice(2)
      .map((row) => row.split("|")[1]!.trim());
    expect(ids.sort()).toEqual(served.map((op) => op.id).sort());
    expect(table).toMatch(/\| GET \/calendar\/events \(limit 1-200, default 20; offset\) +\|/);
  });

  it("refuses a README without its markers rather than appending a table", () => {
    expect(() => withRouteTable("# README\n", routeTable(served))).toThrow("markers");
  });
});
