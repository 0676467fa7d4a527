import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type CallToolResult,
  type HostContext,
} from "./host.js";

export type { App, CallToolResult };

/**
 * What every view shares: the connection to the host (our own small client of the ext-apps
 * protocol over postMessage, src/apps/views/host.ts), the host's theme, and safe DOM building. Text always goes in as text nodes, so
 * nothing the API or the model wrote can become markup.
 */

/** Connects to the host; `render` gets each tool result the host sends. */
export async function startView(
  name: string,
  render: (result: CallToolResult, app: App) => void,
): Promise<App> {
  const app = new App({ name, version: "1.0.0" });
  app.ontoolresult = (result) => render(result, app);
  app.onhostcontextchanged = (context) => applyContext(context);
  await app.connect();
  applyContext(app.getHostContext());
  return app;
}

function applyContext(context: HostContext | undefined): void {
  if (context?.theme) applyDocumentTheme(context.theme);
  if (context?.styles?.variables) applyHostStyleVariables(context.styles.variables);
}

type Child = Node | string | null | undefined | false;

/** An element with attributes and children; strings become text nodes, never HTML. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

export function mount(...children: Child[]): void {
  const root = document.getElementById("root");
  if (!root) return;
  root.replaceChildren();
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    root.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** The text of a failed tool result: the server's one sentence. */
export function errorText(result: CallToolResult): string {
  const texts = (result.content ?? []).flatMap((block) =>
    block.type === "text" ? [block.text] : [],
  );
  return texts.join(" ") || "The server refused this call.";
}

/**
 * A decimal string as the API gave it ("1234567.50"), grouped for reading ("1 234 567.50"):
 * digits are moved, never parsed into a float, so no amount changes on its way to the screen.
 */
export function readableAmount(value: unknown, currency?: string): string {
  if (typeof value !== "string" || !/^-?\d+(\.\d+)?$/.test(value)) return String(value ?? "—");
  const [whole = "", fraction] = value.split(".");
  const sign = whole.startsWith("-") ? "-" : "";
  const digits = sign ? whole.slice(1) : whole;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, "\u202f");
  return `${sign}${grouped}${fraction === undefined ? "" : `.${fraction}`}${currency ? ` ${currency}` : ""}`;
}

/** A horizontal bar: a share of the largest count, for the eye only (the figure is printed). */
export function bar(count: number, largest: number): HTMLElement {
  const share = largest > 0 ? Math.max(2, Math.round((count / largest) * 100)) : 0;
  const fill = el("span", { class: "bar-fill" });
  fill.style.width = `${share}%`; // CSSOM, not a style attribute: allowed by a strict CSP
  return el("span", { class: "bar", "aria-hidden": "true" }, fill);
}
