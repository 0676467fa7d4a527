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
import type { Domain, PromptDefinition, ResourceDefinition, ToolDefinition } from "./types.js";

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
  unique(
    "tool",
    inventory.tools.map((t) => t.name),
  );
  unique(
    "resource",
    inventory.resources.map((r) => r.name),
  );
  unique(
    "resource URI",
    inventory.resources.map((r) => r.uri),
  );
  unique(
    "prompt",
    inventory.prompts.map((p) => p.name),
  );
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
  /** A stable key: callers with the same selection share cached listings. */
  key: string;
}

export interface SelectionFilter {
  /** No tool that writes (nor, through them, their resources and prompts). */
  readOnly: boolean;
  /** A client's allowlist of tool names; null for every tool. */
  allowedTools: ReadonlySet<string> | null;
}

const selections = new Map<string, Selection>();

/**
 * The inventory filtered as one set (DESIGN: one inventory): tools by read-only mode and the
 * client's allowlist; resources only when the tool they read through is offered; prompts only
 * when every tool they rely on is; completions follow the resources and prompts.
 */
export function select(filter: SelectionFilter, from: Inventory = INVENTORY): Selection {
  const allowed = filter.allowedTools ? [...filter.allowedTools].sort().join(",") : "*";
  const key = `${filter.readOnly ? "ro" : "rw"}|${allowed}`;
  const cached = from === INVENTORY ? selections.get(key) : undefined;
  if (cached) return cached;
  const tools = from.tools.filter(
    (t) =>
      (!filter.readOnly || t.annotations.readOnlyHint) &&
      (filter.allowedTools === null || filter.allowedTools.has(t.name)),
  );
  const offered = new Set(tools.map((t) => t.name));
  const selection: Selection = {
    key,
    tools,
    resources: from.resources.filter((r) => offered.has(r.tool)),
    prompts: from.prompts.filter((p) => p.tools.every((t) => offered.has(t))),
  };
  if (from === INVENTORY) selections.set(key, selection);
  return selection;
}

/** Every tool name, for validating allowlists. */
export const toolNames = (): string[] => INVENTORY.tools.map((t) => t.name);
/** The tools that draft a write. */
export const draftToolNames = (): string[] =>
  INVENTORY.tools.filter((t) => t.kind === "draft").map((t) => t.name);
