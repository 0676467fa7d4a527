// The distributable builds, from src/cli.ts by esbuild, code-split so that what a start does not
// use (the sandbox and its data, the XLSX and PDF makers, the OAuth code, Redis, OpenTelemetry,
// the write protocol) loads on first use:
// - `node scripts/bundle.mjs --bin` (npm run build) makes dist/cli.js, the package's `bin`, the
//   bundle itself, beside tsc's modules.
// - `node scripts/bundle.mjs <dir>` writes a self-contained copy to <dir>: no node_modules
//   (the MCP Bundle and the container image carry it).
import { cpSync, existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
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

/**
 * One ESM entry for Node, split into chunks loaded on first use (bench/http-first-answer.mjs
 * bundles the minimal server the same way, to compare like with like).
 */
export function esmBundleOptions(entry, outdir) {
  return {
    entryPoints: [entry],
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22.19",
    minify: true,
    // CommonJS dependencies call require(); give them one in the ESM output.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: "warning",
  };
}

/** What both builds share. */
function options(root, outdir) {
  return {
    ...esmBundleOptions(join(root, "src", "cli.ts"), outdir),
    legalComments: "linked",
    plugins: [withoutAjv],
  };
}

/** A chunk of an earlier bundle in dist/ (tsc's own modules have no hash in their names). */
const CHUNK = /^[\w-]+-[A-Z0-9]{8}\.js(\.LEGAL\.txt)?$/;

/**
 * dist/cli.js as the bundle: written over tsc's dist/cli.js, chunks beside it (so that
 * version.ts still finds ../package.json and the views dist/apps/views/). The metafile says
 * which sources each chunk holds (test/cold-path.test.ts reads it).
 */
export async function bundleBin(root) {
  const dist = join(root, "dist");
  for (const name of existsSync(dist) ? readdirSync(dist) : [])
    if (CHUNK.test(name)) rmSync(join(dist, name));
  const result = await build({
    ...options(root, dist),
    allowOverwrite: true,
    metafile: true,
    // Tracing's SDK stays in node_modules (its exporters and the metrics are bundled, loaded on
    // first use): test/telemetry/stdio.test.ts watches it load once an endpoint is set.
    external: ["@opentelemetry/sdk-trace"],
  });
  writeFileSync(join(dist, "bundle-meta.json"), JSON.stringify(result.metafile));
  rmSync(join(dist, "cli.js.map"), { force: true }); // tsc's, for the file the bundle replaced
  return join(dist, "cli.js");
}

export async function bundle(root, outdir) {
  const pkg = JSON.parse(
    (await import("node:fs")).readFileSync(join(root, "package.json"), "utf8"),
  );
  await build(options(root, join(outdir, "dist")));
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
  const root = new URL("..", import.meta.url).pathname;
  if (!process.argv[2])
    throw new Error("usage: node scripts/bundle.mjs --bin | <output directory>");
  if (process.argv[2] === "--bin") await bundleBin(root);
  else await bundle(root, resolve(process.argv[2]));
}
