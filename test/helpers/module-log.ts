import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A module hook for a child process (`node --import <hook>`): it notes in a file every module
 * URL the child resolves (those containing `only`, when given), and `marksAnswer` adds the line
 * ANSWER at the moment the child first writes to stdout, so that what loaded before the first
 * answer can be told from what loaded after. `dir` is the hook's own scratch directory.
 */
export function moduleLog(prefix: string, options: { only?: string; marksAnswer?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const list = join(dir, "loaded.txt");
  writeFileSync(list, "");
  const hook = join(dir, "hook.mjs");
  const noted = options.only ? `if (resolved.url.includes(${JSON.stringify(options.only)})) ` : "";
  const answer = options.marksAnswer
    ? `// The moment the first answer leaves: this process may load more before the test reads it.
const write = process.stdout.write;
process.stdout.write = function (...args) {
  process.stdout.write = write;
  appendFileSync(${JSON.stringify(list)}, "ANSWER\\n");
  return write.apply(this, args);
};
`
    : "";
  writeFileSync(
    hook,
    `import { registerHooks } from "node:module";
import { appendFileSync } from "node:fs";
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    ${noted}appendFileSync(${JSON.stringify(list)}, resolved.url + "\\n");
    return resolved;
  },
});
${answer}`,
  );
  return { dir, hook, lines: () => readFileSync(list, "utf8").split("\n").filter(Boolean) };
}

/** The environment without this shell's own server and telemetry settings. */
export function withoutServerSettings(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith("PORTFOLIO_") && !k.startsWith("OTEL_"),
    ),
  ) as Record<string, string>;
}
