import { folded } from "../fold.js";
import { asPrincipal, SERVER_PRINCIPAL } from "../http/principal.js";
import type { OperationId } from "./catalogue.js";
import type { ApiClient } from "./client.js";
import { asListPage } from "./response.js";

export interface Named {
  id: string;
  name: string;
}

const TTL_MS = 60_000;
const MAX_SUGGESTIONS = 100;

/**
 * Names and codes for argument completion, fetched on first use and kept a minute: completion
 * runs on every keystroke, the directory changes slowly.
 */
export class Directory {
  private readonly cache = new Map<string, { at: number; value: Promise<unknown> }>();

  constructor(private readonly api: ApiClient) {}

  operations = () => this.named("operations", "operations_list", true);
  deals = () => this.named("deals", "deals_list", true);
  spvs = () => this.named("spvs", "spvs_list", false);
  operators = () => this.named("operators", "operators_list", true);

  /** Codes of one taxonomy dimension. */
  codes(dimension: string): Promise<string[]> {
    return this.cached(`codes:${dimension}`, async () => {
      const { data } = await this.api.call("taxonomies_get", {});
      const dimensions = (data as { dimensions?: unknown }).dimensions;
      const found = Array.isArray(dimensions)
        ? (dimensions as Array<{ dimension?: string; values?: Array<{ code?: unknown }> }>).find(
            (d) => d.dimension === dimension,
          )
        : undefined;
      return (found?.values ?? [])
        .map((v) => v.code)
        .filter((c): c is string => typeof c === "string");
    });
  }

  fieldKeys(): Promise<string[]> {
    return this.cached("field-keys", async () => {
      const page = asListPage((await this.api.call("field_definitions_list", {})).data);
      return page.items
        .map((d) => (d as { key?: unknown }).key)
        .filter((k): k is string => typeof k === "string");
    });
  }

  private named(key: string, operation: OperationId, paged: boolean): Promise<Named[]> {
    return this.cached(key, async () => {
      const out: Named[] = [];
      for (let offset = 0, pages = 0; pages < 10; pages++) {
        const query = paged ? { limit: 200, offset } : {};
        const page = asListPage((await this.api.call(operation, { query } as never)).data);
        for (const item of page.items as Array<{ id?: unknown; name?: unknown }>) {
          if (typeof item.id === "string")
            out.push({ id: item.id, name: typeof item.name === "string" ? item.name : "" });
        }
        offset += page.items.length;
        if (!paged || page.items.length === 0 || offset >= page.total) break;
      }
      return out;
    });
  }

  private cached<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.value as Promise<T>;
    // Shared by every client: loaded on the server's turns, not on the first asker's.
    const value = asPrincipal(SERVER_PRINCIPAL, load);
    this.cache.set(key, { at: Date.now(), value });
    value.catch(() => this.cache.delete(key)); // a failure is not cached
    return value;
  }
}

/** Ids whose name (or id) contains what was typed, accents and case ignored. */
export function matchNamed(items: Named[], typed: string): string[] {
  const needle = folded(typed.trim());
  return items
    .filter(
      (i) =>
        needle === "" || folded(i.name).includes(needle) || i.id.startsWith(typed.toLowerCase()),
    )
    .map((i) => i.id)
    .slice(0, MAX_SUGGESTIONS);
}

export function matchCodes(codes: string[], typed: string): string[] {
  const needle = folded(typed.trim());
  return codes.filter((c) => folded(c).startsWith(needle)).slice(0, MAX_SUGGESTIONS);
}
