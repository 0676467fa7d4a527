import type { Offer } from "../api/offer.js";
import { alerts } from "../domains/alerts.js";
import { calendar } from "../domains/calendar.js";
import { confirmation } from "../domains/confirmation.js";
import { deals } from "../domains/deals.js";
import { me } from "../domains/me.js";
import { operations } from "../domains/operations.js";
import { operators } from "../domains/operators.js";
import { portfolio } from "../domains/portfolio.js";
import { reference } from "../domains/reference.js";
import { reporting } from "../domains/reporting.js";
import { search } from "../domains/search.js";
import { structures } from "../domains/structures.js";
import { workflows } from "../domains/workflows.js";
import { api } from "../longtail/tools.js";
import type {
  Domain,
  PromptDefinition,
  ResourceDefinition,
  ToolDefinition,
} from "../toolkit/definitions.js";

const DOMAINS: readonly Domain[] = [
  portfolio,
  operations,
  deals,
  structures,
  operators,
  reference,
  calendar,
  alerts,
  search,
  reporting,
  workflows,
  me,
  api,
  confirmation,
];

export interface Inventory {
  tools: readonly ToolDefinition[];
  resources: readonly ResourceDefinition[];
  prompts: readonly PromptDefinition[];
}

/** Everything the server can offer. Names are unique by construction: a repeat fails at load. */
export const INVENTORY: Inventory = collect(DOMAINS);

export function collect(domains: readonly Domain[]): Inventory {
  const inventory: Inventory = {
    tools: domains.flatMap((d) => d.tools),
    resources: domains.flatMap((d) => d.resources ?? []),
    prompts: domains.flatMap((d) => d.prompts ?? []),
  };
  const names: Array<[string, string[]]> = [
    ["tool", inventory.tools.map((t) => t.name)],
    ["resource", inventory.resources.map((r) => r.name)],
    ["resource URI", inventory.resources.map((r) => r.uri)],
    ["prompt", inventory.prompts.map((p) => p.name)],
  ];
  for (const [what, list] of names) unique(what, list);
  const tools = new Set(inventory.tools.map((t) => t.name));
  for (const r of inventory.resources)
    if (!tools.has(r.tool))
      throw new Error(`resource ${r.name} reads through unknown tool ${r.tool}`);
  for (const p of inventory.prompts)
    for (const t of p.tools)
      if (!tools.has(t)) throw new Error(`prompt ${p.name} relies on unknown tool ${t}`);
  return inventory;
}

function unique(what: string, names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new Error(`${what} ${name} is declared twice`);
    seen.add(name);
  }
}

/** What one caller may see and use; every MCP method answers from this and nothing else. */
export interface Selection extends Inventory {
  /** What the caller is offered of the API: the generic tools reach exactly this. */
  offer: Offer;
  /** The offered curated tool for each operation it reads or drafts, first declared first. */
  toolByOperation: ReadonlyMap<string, string>;
}

const selections = new WeakMap<Offer, Selection>();

/**
 * The operations an allowlist must name for a tool it does not name: all it calls, except that
 * a draft tool's reads only look its target up to name it in the preview, so its writes suffice.
 */
function governing(t: ToolDefinition): readonly string[] {
  return t.kind === "draft" && t.writes !== "offered" ? t.writes : t.operations;
}

/**
 * The inventory filtered as one set (DESIGN: one inventory), from what the caller is offered of
 * the API: a tool only when every operation it calls is offered (the key's contract, read-only
 * mode, a delegated user, the sensitive list) and the client's allowlist names it or all its
 * operations (for a draft tool, the writes it drafts); the generic tools when a contract leaves
 * them something to reach that no offered curated tool does; the confirmation tools when
 * something can be drafted; resources only when the tool they read through is offered; prompts
 * only when every tool they rely on is.
 */
export function select(offer: Offer, from: Inventory = INVENTORY): Selection {
  const cached = from === INVENTORY ? selections.get(offer) : undefined;
  if (cached) return cached;
  const list = offer.rules.allowlist;
  const named = (t: ToolDefinition) => list === null || list.has(t.name);
  // The card's buttons come with the two-step pair an allowlist names (app_confirm_write with
  // confirm_write): a client is offered whichever pair suits it (src/mcp/tools.ts).
  const namedPair = (t: ToolDefinition) =>
    t.settles === "app" && named({ ...t, name: t.name.replace(/^app_/, "") });
  const curated = (t: ToolDefinition) =>
    (!offer.rules.readOnly || t.annotations.readOnlyHint) &&
    t.operations.every(
      (id) => offer.routes.has(id) && offer.ruleOut(offer.routes.get(id)!) === null,
    ) &&
    (named(t) || governing(t).every((id) => offer.allowlisted(offer.routes.get(id)!)));
  // The generic tools are worth their place in the listing only for what no offered curated
  // tool already does (an allowlist of a few operations often leaves them nothing).
  const covered = new Set(
    from.tools
      .filter((t) => !t.reach && t.family !== "confirmation" && curated(t))
      .flatMap(governing),
  );
  const reachable = (kind: "read" | "write") =>
    offer.fromContract &&
    [...offer.offered.values()].some((op) => op.kind === kind && !covered.has(op.id));
  const drafts = from.tools.filter(
    (t) => (t.kind === "draft" && curated(t)) || (t.reach === "write" && reachable("write")),
  );
  const tools = from.tools.filter((t) => {
    if (t.family === "confirmation") return drafts.length > 0 && (named(t) || namedPair(t));
    if (t.reach === "any") return reachable("read") || reachable("write");
    if (t.reach) return reachable(t.reach);
    return curated(t);
  });
  const offered = new Set(tools.map((t) => t.name));
  const toolByOperation = new Map<string, string>();
  for (const t of tools) {
    const primary =
      t.kind === "draft" ? (t.writes === "offered" ? [] : t.writes) : t.operations.slice(0, 1);
    for (const id of primary) if (!toolByOperation.has(id)) toolByOperation.set(id, t.name);
  }
  const selection: Selection = {
    offer,
    toolByOperation,
    tools,
    resources: from.resources.filter((r) => offered.has(r.tool)),
    prompts: from.prompts.filter((p) => p.tools.every((t) => offered.has(t))),
  };
  if (from === INVENTORY) selections.set(offer, selection);
  return selection;
}

/**
 * Why a tool of the inventory is not in a selection, in words for the model; null for a name
 * the server does not have at all.
 */
export function whyNotOffered(name: string, selection: Selection): string | null {
  const tool = INVENTORY.tools.find((t) => t.name === name);
  if (!tool) return null;
  const { offer } = selection;
  if (offer.rules.readOnly && !tool.annotations.readOnlyHint)
    return "it writes, and this server is read-only";
  for (const id of tool.operations) {
    if (!offer.routes.has(id)) return `the API key's contract does not list ${id}`;
    const why = offer.ruleOut(offer.routes.get(id)!);
    if (why) return why;
  }
  if (tool.reach) return "the API key's contract offers nothing it could reach";
  return "it is outside this client's allowlist";
}
