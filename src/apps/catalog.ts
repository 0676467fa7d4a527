import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  EXTENSION_ID,
  getUiCapability,
  RESOURCE_MIME_TYPE,
} from "@modelcontextprotocol/ext-apps/server";
import type { ClientCapabilities } from "@modelcontextprotocol/server";

/**
 * The MCP Apps views this server offers (the `io.modelcontextprotocol/ui` extension): the card
 * in which a person confirms a write, and two read views. Each is one self-contained HTML file
 * built by scripts/build-apps.mjs from src/apps/views/; the model keeps reading the text result.
 */

export { EXTENSION_ID as APPS_EXTENSION, RESOURCE_MIME_TYPE as APP_MIME_TYPE };

export type AppViewName = "confirm-write" | "overview" | "operation";

export interface AppView {
  name: AppViewName;
  uri: string;
  title: string;
  description: string;
}

export const APP_VIEWS: Record<AppViewName, AppView> = {
  "confirm-write": {
    name: "confirm-write",
    uri: "ui://portfolio/confirm-write.html",
    title: "Confirm a write",
    description:
      "The card in which a person confirms or cancels a drafted write: action, target, author, fields, warnings.",
  },
  overview: {
    name: "overview",
    uri: "ui://portfolio/overview.html",
    title: "Portfolio overview (view)",
    description: "Counts and amounts by status, asset class and SPV, and the deal pipeline.",
  },
  operation: {
    name: "operation",
    uri: "ui://portfolio/operation.html",
    title: "Operation (view)",
    description: "One operation: status, phase, SPV, key figures with units, latest notes.",
  },
};

/**
 * Nothing from the network: no connect, resource or frame domains. Hosts build the iframe's
 * CSP from this (ext-apps specification, UI resource metadata).
 */
export const APP_CSP = { connectDomains: [], resourceDomains: [], frameDomains: [] };

/** Whether the client renders MCP Apps: it declared the extension with the HTML profile. */
export function rendersApps(capabilities: ClientCapabilities | undefined): boolean {
  return getUiCapability(capabilities)?.mimeTypes?.includes(RESOURCE_MIME_TYPE) ?? false;
}

const pages = new Map<AppViewName, string>();

/** The view's HTML, read once. */
export function appHtml(name: AppViewName): string {
  let page = pages.get(name);
  if (page === undefined) {
    page = readFileSync(join(viewsDir(), `${name}.html`), "utf8");
    pages.set(name, page);
  }
  return page;
}

/**
 * dist/apps/views/ beside this module once built, or under the package root when this runs
 * from src/ (tests) or from one bundled file (the MCP Bundle keeps dist/apps/views/).
 */
function viewsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 4; up++) {
    for (const candidate of [join(dir, "views"), join(dir, "dist", "apps", "views")]) {
      if (existsSync(join(candidate, "confirm-write.html"))) return candidate;
    }
    dir = dirname(dir);
  }
  throw new Error("the MCP Apps views are not built: run npm run build");
}
