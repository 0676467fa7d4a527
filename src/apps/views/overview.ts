import { bar, el, errorText, mount, readableAmount, startView } from "./common.js";

/**
 * The portfolio overview (get_portfolio_overview): counts as bars, amounts as the API's decimal
 * strings, grouped for reading. No total is computed here: every figure shown is one the API gave.
 */

type Row = Record<string, unknown> & { count?: number };

startView("portfolio-overview", (result) => {
  if (result.isError) return mount(el("p", { class: "error" }, errorText(result)));
  const overview = (result.structuredContent ?? {}) as Record<string, unknown>;
  const currency = typeof overview.currency === "string" ? overview.currency : undefined;
  const entity = (overview.entity ?? {}) as { name?: string };
  const totals = (overview.totals ?? {}) as Record<string, unknown>;
  mount(
    el(
      "section",
      { class: "view", "aria-label": "Portfolio overview" },
      el("h1", {}, entity.name ? `Portfolio of ${entity.name}` : "Portfolio overview"),
      typeof overview.as_of === "string"
        ? el("p", { class: "muted" }, `As of ${overview.as_of.slice(0, 10)}`)
        : null,
      el(
        "div",
        { class: "tiles" },
        tile("Operations", totals.operations),
        tile("Committed", readableAmount(totals.montant_engage, currency)),
        tile("Outstanding", readableAmount(totals.encours, currency)),
        tile("Deals", totals.deals),
      ),
      group("By status", rows(overview.by_status), "status", currency),
      group("By asset class", rows(overview.by_asset_class), "classe_actif", currency),
      group("By SPV", rows(overview.by_spv), "spv_name", currency),
      group("Deal pipeline by stage", rows(overview.deals_by_status), "status", currency),
    ),
  );
}).catch(() => mount(el("p", { class: "error" }, "This view could not connect.")));

const rows = (value: unknown): Row[] => (Array.isArray(value) ? (value as Row[]) : []);

function tile(label: string, value: unknown): HTMLElement {
  return el(
    "div",
    { class: "tile" },
    el("span", { class: "tile-label" }, label),
    el("span", { class: "tile-value" }, value === undefined ? "—" : String(value)),
  );
}

/** One breakdown: a bar per line for its count, then its amounts as given. */
function group(title: string, lines: Row[], key: string, currency?: string): HTMLElement | null {
  if (lines.length === 0) return null;
  const amountKeys = Object.keys(lines[0] ?? {}).filter(
    (k) => k !== key && k !== "count" && typeof lines[0]?.[k] === "string" && !k.endsWith("_id"),
  );
  const largest = Math.max(...lines.map((l) => (typeof l.count === "number" ? l.count : 0)));
  const head = el(
    "tr",
    {},
    el("th", { scope: "col" }, title.replace(/^By /, "").replace(/^Deal pipeline by /, "")),
    el("th", { scope: "col", class: "num" }, "Count"),
    el("th", { scope: "col", class: "chart" }, ""),
    ...amountKeys.map((k) => el("th", { scope: "col", class: "num" }, label(k))),
  );
  const body = lines.map((line) =>
    el(
      "tr",
      {},
      el("th", { scope: "row" }, String(line[key] ?? line.spv_id ?? "none")),
      el("td", { class: "num" }, String(line.count ?? "")),
      el("td", { class: "chart" }, bar(Number(line.count ?? 0), largest)),
      ...amountKeys.map((k) => el("td", { class: "num" }, readableAmount(line[k], currency))),
    ),
  );
  return el(
    "section",
    { class: "group" },
    el("h2", {}, title),
    el(
      "div",
      { class: "scroll" },
      el("table", {}, el("thead", {}, head), el("tbody", {}, ...body)),
    ),
  );
}

const LABELS: Record<string, string> = {
  montant_engage: "Committed",
  encours: "Outstanding",
  montant_estime: "Estimated",
};
const label = (key: string) => LABELS[key] ?? key.replace(/_/g, " ");
