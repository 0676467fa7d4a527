// Builds the MCP Apps views (src/apps/views/*.ts, browser code with our own client of the ext-apps
// protocol, src/apps/views/host.ts: 10-11 KiB a view, against 402 KiB with the official App,
// the SDK's Protocol and zod)
// into self-contained HTML files under dist/apps/views/: one inline script, one inline style,
// nothing fetched from anywhere, so the views run under a CSP that allows no network at all.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
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
  sizes.push(
    `${name} ${(Buffer.byteLength(html) / 1024).toFixed(1)} KiB (gzip ${(gzipSync(html).length / 1024).toFixed(1)} KiB)`,
  );
}
if (process.env.BUILD_APPS_VERBOSE) console.error(`apps: ${sizes.join(", ")}`);
