import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * The workspace's packages are read from their sources (as the "portfolio-mcp-source" export condition does
 * for TypeScript), so a test sees an edit under packages/ without rebuilding them.
 */
const fromSource = (name: string) => {
  const src = fileURLToPath(new URL(`./packages/${name}/src`, import.meta.url));
  return [
    { find: new RegExp(`^@portfolio-mcp/${name}$`), replacement: `${src}/index.ts` },
    { find: new RegExp(`^@portfolio-mcp/${name}/(.+)$`), replacement: `${src}/$1.ts` },
  ];
};

export default defineConfig({
  resolve: { alias: [...fromSource("sandbox"), ...fromSource("field-errors")] },
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // expect.poll waits for what a browser draws; its 1 s default failed a view's first render
    // on a CI machine at load 7 (a wait that only ends early when the thing is there).
    expect: { poll: { timeout: 10_000 } },
  },
});
