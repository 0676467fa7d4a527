// Builds the MCP Apps views (src/apps/views/*.ts, browser code with the official ext-apps App)
// into self-contained HTML files under dist/apps/views/: one inline script, one inline style,
// nothing fetched from anywhere, so the views run under a CSP that allows no network at all.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "src", "apps", "views");
const out = join(root, "dist", "apps", "views");

/** The views: file name, and the page title a host may show. */
export const VIEWS = [
  ["confirm-write", "Confirm a write"],
  ["overview", "Portfolio overview"],
  ["operation", "Operation"],
];

/**
 * zod's error messages in every language it ships (about 300 KB) would ride along with each
 * view, because the SDK imports zod as a namespace; a view only ever needs English.
 */
const englishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${join("zod", "v4")}`)
        ? { path: join(dirname(args.importer), "..", "locales", "en.js"), namespace: "english" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "english" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

const css = readFileSync(join(source, "style.css"), "utf8");
mkdirSync(out, { recursive: true });
const sizes = [];
for (const [name, title] of VIEWS) {
  const result = await build({
    entryPoints: [join(source, `${name}.ts`)],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    plugins: [englishOnly],
  });
  // Inline, "</script" would end the element early wherever it appears in the code.
  const js = result.outputFiles[0].text.replace(/<\/script/gi, "<\\/script");
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${css}</style>
</head>
<body>
<main id="root"><p class="muted">Loading…</p></main>
<script>${js}</script>
</body>
</html>
`;
  writeFileSync(join(out, `${name}.html`), html);
  sizes.push(`${name} ${Math.round(html.length / 1024)} KiB`);
}
if (process.env.BUILD_APPS_VERBOSE) console.error(`apps: ${sizes.join(", ")}`);
