import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The shared package is read from its source, as the "portfolio-mcp-source" export condition does for tsc.
const fieldErrors = fileURLToPath(new URL("../field-errors/src/index.ts", import.meta.url));

export default defineConfig({
  resolve: { alias: [{ find: /^@portfolio-mcp\/field-errors$/, replacement: fieldErrors }] },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
