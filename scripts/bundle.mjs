// The distributable build: dist/ bundled by esbuild into a few files with no node_modules,
// code-split so that the XLSX library and the sandbox load only when used.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

/**
 * The server passes its own form validator (src/form-validator.ts), so the SDK's Ajv-based
 * default is never used: leaving it (and Ajv) out of the bundle spares every start its load.
 */
const withoutAjv = {
  name: "without-ajv",
  setup(build) {
    build.onResolve({ filter: /validation\/ajv-provider\.js$/ }, () => ({
      path: "ajv-provider",
      namespace: "stub",
    }));
    build.onLoad({ filter: /.*/, namespace: "stub" }, () => ({
      contents:
        "export class AjvJsonSchemaValidator { constructor() { throw new Error('Ajv is not bundled: pass a jsonSchemaValidator'); } }",
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
    target: "node20.19",
    minify: true,
    legalComments: "linked",
    // CommonJS dependencies (exceljs) call require(); give them one in the ESM output.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: "warning",
    plugins: [withoutAjv],
  });
  // version.ts reads ../package.json next to dist/; "type": "module" makes the .js files ESM.
  writeFileSync(
    join(outdir, "package.json"),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, type: "module", private: true, engines: pkg.engines }, null, 2)}\n`,
  );
  return join(outdir, "dist", "cli.js");
}
