import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Sandbox } from "@portfolio-mcp/sandbox";

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

/**
 * A server's environment for the sandbox, without this shell's own settings: its state under
 * `dir` (a module log's scratch directory), warnings only.
 */
export function sandboxServerEnv(sandbox: Sandbox, dir: string): Record<string, string> {
  return {
    ...withoutServerSettings(),
    PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
    PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
    PORTFOLIO_API_SECRET: sandbox.credentials.secret,
    PORTFOLIO_DELEGATED_USER_EMAIL: "camille.martin@aurore-capital.example",
    PORTFOLIO_STATE_DIR: join(dir, "state"),
    PORTFOLIO_LOG_LEVEL: "warn",
  };
}

/** The built bundle (dist/cli.js and its chunks; dist/bundle-meta.json: the sources of each). */
export const DIST = fileURLToPath(new URL("../../dist/", import.meta.url));

let bundleMeta: { outputs: Record<string, { inputs: Record<string, unknown> }> } | null = null;

/**
 * The sources behind the module URLs a process resolved: a bundle chunk's sources (src/…,
 * packages/…), a dependency's path from node_modules/ on; anything else is left out.
 */
export function bundleSources(urls: Iterable<string>): string[] {
  bundleMeta ??= JSON.parse(readFileSync(join(DIST, "bundle-meta.json"), "utf8"));
  return [...urls].flatMap((url) => {
    if (url.includes("/node_modules/")) return [url.slice(url.indexOf("node_modules/"))];
    if (!url.startsWith(`file://${DIST}`)) return [];
    return Object.keys(
      bundleMeta?.outputs[`dist/${url.slice(`file://${DIST}`.length)}`]?.inputs ?? {},
    );
  });
}
