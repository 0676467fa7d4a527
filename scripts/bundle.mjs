// The distributable build: dist/ bundled by esbuild into a few files with no node_modules,
// code-split so that the XLSX libraries and the sandbox load only when used. The MCP Bundle
// and the container image carry it. `node scripts/bundle.mjs <dir>` writes it to <dir>.
import { cpSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

/**
 * The server passes its own form validator (src/mcp/form-validator.ts), so the SDK's Ajv-based
 * default is never used: leaving it (and Ajv) out of the bundle spares every start its load.
 * The SDK's 2.x line picks its default through the `_shims` entry; the stub keeps that entry's
 * other export (`process`) and makes the default refuse to be built.
 */
const withoutAjv = {
  name: "without-ajv",
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/(server|client)\/_shims$/ }, () => ({
      path: "sdk-shims",
      namespace: "stub",
    }));
    build.onLoad({ filter: /.*/, namespace: "stub" }, () => ({
      contents: [
        'export { default as process } from "node:process";',
        "export class DefaultJsonSchemaValidator {",
        "  constructor() { throw new Error('Ajv is not bundled: pass a jsonSchemaValidator'); }",
        "}",
      ].join("\n"),
      loader: "js",
    }));
  },
};

export async function bundle(root, outdir) {
  const pkg = JSON.parse(
    (await import("node:fs")).readFileSync(join(root, "package.json"), "utf8"),
  );
  await build({
    entryPoints: [join(root, "dist", "cli.js")],
    outdir: join(outdir, "dist"),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22.19",
    minify: true,
    legalComments: "linked",
    // CommonJS dependencies call require(); give them one in the ESM output.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: "warning",
    plugins: [withoutAjv],
  });
  // The MCP Apps views are HTML files the server reads (src/apps/catalog.ts finds them here).
  cpSync(join(root, "dist", "apps", "views"), join(outdir, "dist", "apps", "views"), {
    recursive: true,
  });
  // version.ts reads ../package.json next to dist/; "type": "module" makes the .js files ESM.
  writeFileSync(
    join(outdir, "package.json"),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, type: "module", private: true, engines: pkg.engines }, null, 2)}\n`,
  );
  return join(outdir, "dist", "cli.js");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (!process.argv[2]) throw new Error("usage: node scripts/bundle.mjs <output directory>");
  await bundle(new URL("..", import.meta.url).pathname, resolve(process.argv[2]));
}
