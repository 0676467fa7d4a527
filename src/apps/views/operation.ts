import {
  type App,
  type CallToolResult,
  el,
  errorText,
  mount,
  readableAmount,
  startView,
} from "./common.js";

/**
 * One operation (get_operation): status, phase, SPV, the key figures of its kpi_snapshot and its
 * business data with their units from the field definitions (get_field_definitions; a unit is
 * never guessed from a name, spec part 2), and its latest notes (list_operation_notes). The two
 * extra reads go through the host to this server, as the same user.
 */

interface Operation {
  id: string;
  name: string;
  status: string;
  phase?: string;
  spv_id?: string | null;
  classe_actif?: string | null;
  statut_interne?: string | null;
  kpi_snapshot?: Record<string, unknown>;
  data?: Record<string, unknown>;
  financial_summary?: Record<string, unknown>;
}

startView("portfolio-operation", (result, app) => void show(result, app)).catch(() =>
  mount(el("p", { class: "error" }, "This view could not connect.")),
);

async function show(result: CallToolResult, app: App): Promise<void> {
  if (result.isError) return mount(el("p", { class: "error" }, errorText(result)));
  const operation = result.structuredContent as Operation | undefined;
  if (!operation?.id) return mount(el("p", {}, "This result has no operation to show."));
  const figures = el("section", { class: "group" }, el("h2", {}, "Key figures"));
  const business = el("section", { class: "group" }, el("h2", {}, "Business data"));
  const notes = el("section", { class: "group" }, el("h2", {}, "Latest notes"));
  mount(
    el(
      "section",
      { class: "view", "aria-label": operation.name },
      el("h1", {}, operation.name),
      el(
        "dl",
        { class: "facts" },
        ...fact("Status", operation.status),
        ...fact("Phase", operation.phase),
        ...fact("SPV", operation.spv_id ?? "none"),
        ...fact("Asset class", operation.classe_actif),
        ...fact("Internal status", operation.statut_interne),
        ...fact("Committed", readableAmount(operation.financial_summary?.montant_engage, "EUR")),
        ...fact("Outstanding", readableAmount(operation.financial_summary?.encours, "EUR")),
      ),
      figures,
      business,
      notes,
    ),
  );
  const [units, latest] = await Promise.all([
    read(app, "get_field_definitions", {}),
    read(app, "list_operation_notes", { operation_id: operation.id, limit: 3 }),
  ]);
  const definitions = definitionsOf(units);
  figures.append(
    figureTable(operation.kpi_snapshot ?? {}, definitions, "No key figures recorded."),
  );
  business.append(figureTable(operation.data ?? {}, definitions, "No business data recorded."));
  notes.append(noteList(latest));
}

async function read(app: App, name: string, args: Record<string, unknown>) {
  try {
    const reply = await app.callServerTool({ name, arguments: args });
    return reply.isError ? null : (reply.structuredContent as Record<string, unknown>);
  } catch {
    return null;
  }
}

function fact(label: string, value: string | null | undefined): HTMLElement[] {
  if (value === null || value === undefined || value === "") return [];
  return [el("dt", {}, label), el("dd", {}, value)];
}

interface Definition {
  label: string | null;
  unit: string | null;
}

function definitionsOf(page: Record<string, unknown> | null): Map<string, Definition> {
  const items = Array.isArray(page?.items) ? page.items : [];
  const definitions = new Map<string, Definition>();
  for (const item of items as Array<{ key?: unknown; unit?: unknown; label?: unknown }>) {
    if (typeof item.key !== "string") continue;
    definitions.set(item.key, {
      label: typeof item.label === "string" ? item.label : null,
      unit: typeof item.unit === "string" ? item.unit : null,
    });
  }
  return definitions;
}

function figureTable(
  values: Record<string, unknown>,
  definitions: Map<string, Definition>,
  none: string,
): HTMLElement {
  const entries = Object.entries(values).filter(([, v]) => v !== null && typeof v !== "object");
  if (entries.length === 0) return el("p", { class: "muted" }, none);
  return el(
    "table",
    { class: "fields" },
    el(
      "tbody",
      {},
      ...entries.map(([key, value]) =>
        el(
          "tr",
          {},
          el("th", { scope: "row" }, definitions.get(key)?.label ?? key),
          el("td", { class: "num" }, withUnit(value, definitions.get(key)?.unit ?? null)),
        ),
      ),
    ),
  );
}

const withUnit = (value: unknown, unit: string | null) =>
  `${typeof value === "string" && /^-?\d+\.\d+$/.test(value) ? readableAmount(value) : String(value)}${unit ? ` ${unit}` : ""}`;

function noteList(page: Record<string, unknown> | null): HTMLElement {
  if (!page) return el("p", { class: "muted" }, "The notes could not be read.");
  const items = (Array.isArray(page.items) ? page.items : []) as Array<Record<string, unknown>>;
  if (items.length === 0) return el("p", { class: "muted" }, "No notes yet.");
  return el(
    "ul",
    { class: "notes" },
    ...items.map((note) =>
      el(
        "li",
        {},
        el(
          "span",
          { class: "muted" },
          `${String(note.created_at ?? "").slice(0, 10)} · ${String(note.author_name ?? "")} · ${String(note.note_type ?? "")}`,
        ),
        el("p", {}, String(note.content ?? note.excerpt ?? "")),
      ),
    ),
  );
}
