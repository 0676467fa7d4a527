import { execFile } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { routeTable } from "@portfolio-mcp/sandbox/contract/readme";
import { ROUTES } from "@portfolio-mcp/sandbox/routes";
import { EXCHANGE_OPERATION } from "@portfolio-mcp/sandbox/tokens";
import { describe, expect, it } from "vitest";

/**
 * Everything that restates the inventory is written by `npm run generate` (scripts/generate.mjs)
 * from it: here its `--check` finds every such file current, and names the one that is not.
 */
const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const GENERATED = [
  "manifest.json",
  "src/everyday.ts",
  "docs/assistant.md",
  "docs/writes.md",
  "docs/sandbox.md",
];
const check = (at: string) =>
  run(process.execPath, [join(at, "scripts/generate.mjs"), "--check"], { cwd: at }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: "" }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );

describe("npm run generate", () => {
  it("--check finds every generated file up to date", async () => {
    const { code, stdout, stderr } = await check(root);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toBe("generated files are up to date\n");
  });

  it("--check names the file that is behind and writes nothing; without it, rewrites it", async () => {
    // A copy of what the script reads, with one table edited by hand.
    const at = mkdtempSync(join(tmpdir(), "generate-"));
    for (const dir of ["scripts", "docs", "src"]) mkdirSync(join(at, dir), { recursive: true });
    cpSync(join(root, "scripts/generate.mjs"), join(at, "scripts/generate.mjs"));
    cpSync(join(root, "scripts/lib"), join(at, "scripts/lib"), { recursive: true });
    for (const file of [...GENERATED, "biome.json", ".gitignore"])
      cpSync(join(root, file), join(at, file));
    for (const dir of ["dist", "node_modules"]) symlinkSync(join(root, dir), join(at, dir));
    const page = join(at, "docs/writes.md");
    const edited = readFileSync(page, "utf8").replace("| `confirm_write`", "| `confirm_writes`");
    writeFileSync(page, edited);

    const stale = await check(at);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toBe("behind the inventory: docs/writes.md (run npm run generate)\n");
    expect(readFileSync(page, "utf8")).toBe(edited);

    const written = await run(process.execPath, [join(at, "scripts/generate.mjs")], { cwd: at });
    expect(written.stdout).toBe("rewrote: docs/writes.md\n");
    expect(readFileSync(page, "utf8")).toBe(readFileSync(join(root, "docs/writes.md"), "utf8"));
    rmSync(at, { recursive: true, force: true });
  });

  it("writes the sandbox's route table: one row per served operation, with its query's bounds", () => {
    const served = [EXCHANGE_OPERATION, ...ROUTES];
    const table = routeTable(served);
    const ids = table
      .split("\n")
      .slice(2)
      .map((row) => row.split("|")[1]!.trim());
    expect(ids.sort()).toEqual(served.map((op) => op.id).sort());
    expect(table).toMatch(/\| GET \/calendar\/events \(limit 1-200, default 20; offset\) +\|/);
    expect(readFileSync(join(root, "docs/sandbox.md"), "utf8")).toContain(table);
  });
});
