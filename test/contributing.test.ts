import { execFile } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
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
    // The snapshots the recipe's own tools will have are the ones it names before they exist.
    const added = [...text.matchAll(/^ {6}name: "(\w+)",$/gm)].map((m) => m[1]!);
    expect(added).toEqual(["get_spv", "resolve_operation_note"]);
    const made = (p: string) => added.some((name) => p === `test/snapshots/tools/${name}.json`);
    const concrete = paths.filter((p) => !p.includes("<") && !made(p));
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

/**
 * The recipe, followed as written in a scratch copy of the repository: each block of
 * CONTRIBUTING.md marked `<!-- recipe: FILE before|replace "TEXT" -->` goes into FILE (before
 * TEXT, or instead of it; TEXT occurs once), each `<!-- recipe: run -->` block runs in a shell,
 * then only the files the recipe names may have changed. Slow (a build and several test files):
 * PORTFOLIO_SKIP_RECIPE=1 skips it on a laptop; CI never sets it.
 */
const run = promisify(execFile);
type Step =
  | { file: string; verb: "before" | "replace"; anchor: string; code: string }
  | { sh: string };

function recipeSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  const marked = /<!-- recipe: (.+?) -->\n```\w*\n([\s\S]*?)```/g;
  for (const [, how, code] of markdown.matchAll(marked)) {
    if (how === "run") {
      steps.push({ sh: code! });
      continue;
    }
    const parsed = /^(\S+) (before|replace) (".*")$/.exec(how!);
    if (!parsed) throw new Error(`a recipe marker this test cannot follow: ${how}`);
    const [, file, verb, anchor] = parsed;
    steps.push({
      file: file!,
      verb: verb as "before" | "replace",
      anchor: JSON.parse(anchor!),
      code: code!,
    });
  }
  return steps;
}

function apply(at: string, step: Extract<Step, { file: string }>): void {
  const path = join(at, step.file);
  const text = readFileSync(path, "utf8");
  const found = text.split(step.anchor).length - 1;
  if (found !== 1) throw new Error(`${step.file}: "${step.anchor}" occurs ${found} times`);
  const code = step.verb === "replace" ? step.code.replace(/\n$/, "") : step.code;
  writeFileSync(
    path,
    text.replace(step.anchor, step.verb === "replace" ? code : `${code}${step.anchor}`),
  );
}

/** The environment a developer's shell has: none of this test run's own settings. */
const shellEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith("VITEST") && !k.startsWith("PORTFOLIO_") && k !== "UPDATE_SNAPSHOTS",
    ),
  );

describe("CONTRIBUTING.md's recipe, followed in a scratch copy", () => {
  it.skipIf(process.env.PORTFOLIO_SKIP_RECIPE === "1")(
    "adds a read and a write: the named tests pass, and only the named files change",
    async () => {
      const steps = recipeSteps(text);
      expect(steps.filter((s) => "file" in s).length).toBeGreaterThanOrEqual(5);
      expect(steps.filter((s) => "sh" in s).length).toBeGreaterThanOrEqual(3);

      // Where the recipe has been applied as written (the scripted addition it describes), its
      // blocks are in their files already: then the generated files must follow from them.
      const edits = steps.filter((s) => "file" in s);
      if (edits.every((s) => source(s.file).includes(s.code.trimEnd()))) {
        const { stdout } = await run(process.execPath, ["scripts/generate.mjs", "--check"], {
          cwd: root,
        });
        expect(stdout).toBe("generated files are up to date\n");
        return;
      }
      const at = mkdtempSync(join(tmpdir(), "recipe-"));
      try {
        const git = (...args: string[]) => run("git", args, { cwd: at, env: shellEnv() });
        const tracked = (await run("git", ["ls-files", "-z"], { cwd: root })).stdout
          .split("\0")
          .filter((f) => f && existsSync(join(root, f)));
        for (const file of tracked) {
          mkdirSync(dirname(join(at, file)), { recursive: true });
          copyFileSync(join(root, file), join(at, file));
        }
        symlinkSync(join(root, "node_modules"), join(at, "node_modules"));
        await git("init", "-q");
        await git("add", "-A");
        await git(
          "-c",
          "user.name=recipe",
          "-c",
          "user.email=recipe@example.invalid",
          "commit",
          "-qm",
          "before",
        );

        for (const step of steps)
          if ("file" in step) apply(at, step);
          else
            await run("bash", ["-euo", "pipefail", "-c", step.sh], {
              cwd: at,
              env: shellEnv(),
              maxBuffer: 64 * 1024 * 1024,
              timeout: 600_000,
            });

        const changed = (await git("status", "--porcelain", "--untracked-files=all")).stdout
          .split("\n")
          .filter(Boolean)
          .map((line) => line.slice(3));
        const section = text.slice(
          text.indexOf("## Adding a read and a write"),
          text.indexOf("### Beyond"),
        );
        const named = new Set(
          [...section.matchAll(/`([\w./-]+\.(?:ts|json|md))`/g)].map((m) => m[1]!),
        );
        expect(
          changed.filter((f) => !named.has(f)),
          "changed but not named by the recipe",
        ).toEqual([]);
        expect(changed.sort()).toEqual(
          [
            "docs/assistant.md",
            "docs/writes.md",
            "manifest.json",
            "src/api/catalogue.ts",
            "src/domains/operations.ts",
            "src/domains/structures.ts",
            "src/everyday.ts",
            "test/snapshots/tools/get_spv.json",
            "test/snapshots/tools/resolve_operation_note.json",
          ].sort(),
        );
      } finally {
        rmSync(at, { recursive: true, force: true });
      }
    },
    900_000,
  );
});
