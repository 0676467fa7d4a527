import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * CONTRIBUTING.md is a recipe: it must stay true as the code moves. Every path it names exists,
 * and every helper it names is still exported by the module it sends the reader to.
 */
const root = join(import.meta.dirname, "..");
const text = readFileSync(join(root, "CONTRIBUTING.md"), "utf8");
const source = (path: string) => readFileSync(join(root, path), "utf8");

const HELPERS: Array<[string, string]> = [
  ["detailTool", "src/toolkit/read-tools.ts"],
  ["listTool", "src/toolkit/read-tools.ts"],
  ["defineTool", "src/toolkit/definitions.ts"],
  ["READ_ONLY", "src/toolkit/definitions.ts"],
  ["CREATES", "src/toolkit/write-tools.ts"],
  ["lookUp", "src/toolkit/write-tools.ts"],
  ["quote", "src/writes/display.ts"],
  ["connectInMemory", "test/helpers/mcp.ts"],
];

describe("CONTRIBUTING.md", () => {
  it("names only paths that exist", () => {
    const paths = [...text.matchAll(/`((?:src|test|scripts)\/[\w./<>-]+)`/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(10);
    const concrete = paths.filter((p) => !p.includes("<"));
    expect(concrete.filter((p) => !existsSync(join(root, p)))).toEqual([]);
  });

  it("names helpers that their modules still export", () => {
    for (const [name, path] of HELPERS) {
      expect(text, `${name} is in the recipe`).toContain(name);
      expect(source(path), `${path} exports ${name}`).toMatch(
        new RegExp(`export (?:async )?(?:const|function) ${name}\\b`),
      );
    }
  });

  it("shows catalogue entries and tool options that the code accepts", () => {
    const catalogue = source("src/api/catalogue.ts");
    for (const key of ["method:", "path:", "scope:", 'kind: "read"', "params:"])
      expect(catalogue).toContain(key);
    const readTools = source("src/toolkit/read-tools.ts");
    for (const option of ["operation: OperationId", "input?: z.ZodObject"])
      expect(readTools).toContain(option);
    expect(source("test/mcp/surface.test.ts")).toContain("UPDATE_SNAPSHOTS");
  });
});
