import type { Icon } from "@modelcontextprotocol/server";
import type { Family } from "../toolkit/definitions.js";

/**
 * Small monochrome SVG icons as data URIs (no fetch, nothing external): one for the server and
 * one per family, so a client can show at a glance what a tool touches. Paths on a 24×24 grid,
 * stroked in currentColor so they follow the client's theme.
 */
const PATHS: Record<Family | "server", string> = {
  server: "M4 20V9l8-5 8 5v11M9 20v-6h6v6",
  portfolio: "M4 20V10M10 20V4M16 20v-8M22 20H2",
  operations: "M3 21V8l7-4 7 4v13M7 12h6M7 16h6M17 21h4V12l-4-2",
  deals: "M3 5h18l-7 8v6l-4 2v-8z",
  structures: "M4 4h16v6H4zM4 14h7v6H4zM13 14h7v6h-7z",
  operators: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21c0-4 4-6 8-6s8 2 8 6",
  reference: "M5 4h11l3 3v13H5zM9 10h6M9 14h6",
  calendar: "M4 6h16v14H4zM4 10h16M8 3v4M16 3v4",
  alerts: "M6 17v-6a6 6 0 0 1 12 0v6l2 2H4zM10 21h4",
  search: "M10 17a7 7 0 1 0 0-14 7 7 0 0 0 0 14zM15 15l6 6",
  reporting: "M6 3h9l4 4v14H6zM9 17v-4M12 17v-7M15 17v-2",
  workflows: "M5 6h5v4H5zM14 14h5v4h-5zM10 8h4v8",
  me: "M12 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM5 21a7 7 0 0 1 14 0",
  confirmation: "M4 12l5 5L20 6",
  api: "M8 6l-6 6 6 6M16 6l6 6-6 6M14 4l-4 16",
};

const svg = (path: string) =>
  `<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 24 24'><path d='${path}' fill='none' stroke='currentColor' stroke-width='2' stroke-linejoin='round'/></svg>`;

/**
 * Only the characters a URI may not carry raw (RFC 3986) are escaped: the icon stays a valid
 * URI, and short.
 */
const icon = (path: string): Icon[] => [
  {
    src: `data:image/svg+xml,${svg(path).replace(/[\s<>#%"{}|\\^`]/g, encodeURIComponent)}`,
    mimeType: "image/svg+xml",
    sizes: ["any"],
  },
];

const BY_FAMILY = new Map(Object.entries(PATHS).map(([family, path]) => [family, icon(path)]));

export const familyIcons = (family: Family): Icon[] => BY_FAMILY.get(family) ?? [];
export const SERVER_ICONS: Icon[] = icon(PATHS.server);
/** The server's icon as an SVG file, for the MCP bundle's manifest: no theme there, so a colour. */
export const SERVER_ICON_SVG = `${svg(PATHS.server).replace("currentColor", "#1d4ed8")}\n`;
