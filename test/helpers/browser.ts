import { existsSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { type Browser, chromium } from "playwright-core";

/**
 * Debian's Chromium for the browser tests (`apt-get install chromium`; .ci/run installs it).
 * Without it the browser tests are skipped with a warning, unless PORTFOLIO_REQUIRE_BROWSER=1
 * (set by CI), where its absence fails them.
 */
export const CHROMIUM = process.env.PORTFOLIO_TEST_CHROMIUM ?? "/usr/bin/chromium";
export const HAVE_BROWSER = existsSync(CHROMIUM);
if (!HAVE_BROWSER && process.env.PORTFOLIO_REQUIRE_BROWSER === "1")
  throw new Error(`The browser tests need Chromium at ${CHROMIUM} (apt-get install chromium).`);
if (!HAVE_BROWSER)
  console.warn(`Browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium).`);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}

/** The test host page: test/apps/host/host.ts bundled into one inline script. */
export async function hostPage(): Promise<string> {
  const result = await build({
    entryPoints: [join(import.meta.dirname, "..", "apps", "host", "host.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2022",
    logLevel: "warning",
  });
  const js = (result.outputFiles[0]?.text ?? "").replace(/<\/script/gi, "<\\/script");
  return `<!doctype html><html><head><meta charset="utf-8"><title>test host</title></head><body><script>${js}</script></body></html>`;
}
