import { randomUUID } from "node:crypto";
import { folded } from "../fold.js";
import { asPrincipal, SERVER_PRINCIPAL } from "../http/principal.js";
import type { Operation, OperationId } from "./catalogue.js";
import type { ApiClient } from "./client.js";
import { asListPage } from "./response.js";

export interface Named {
  id: string;
  name: string;
}

/** What a list of documents or a search hit says of a document besides its name. */
export interface DocumentFacts {
  document_date: string | null;
  content_type: string | null;
  size_bytes: number | null;
}

const TTL_MS = 60_000;
const MAX_SUGGESTIONS = 100;

/** Most pages a directory walks: enough for a portfolio, never unbounded. */
const MAX_PAGES = 10;

/**
 * Names and codes for argument completion, and the names lists show beside the ids they hold
 * (toolkit/names.ts), fetched on first use and kept a minute: completion runs on every
 * keystroke, lists name every row, and the directory changes slowly.
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

  /**
   * The documents this key may open (documents_list, where the key's contract has it), by id:
   * their date, type and size, for a search hit or a row that names a document by its id only.
   */
  documents(): Promise<Map<string, DocumentFacts>> {
    return this.cached("documents", async () => {
      const operation = this.api.routes.get("documents_list");
      const facts = new Map<string, DocumentFacts>();
      if (!operation) return facts;
      const limit = operation.contract?.queryParameters.find((p) => p.name === "limit")?.schema
        .maximum;
      for (const raw of await this.walk(operation, typeof limit === "number" ? limit : 100)) {
        const d = raw as Record<string, unknown>;
        if (typeof d.id !== "string") continue;
        facts.set(d.id.toLowerCase(), {
          document_date: typeof d.document_date === "string" ? d.document_date : null,
          content_type: typeof d.content_type === "string" ? d.content_type : null,
          size_bytes: typeof d.size_bytes === "number" ? d.size_bytes : null,
        });
      }
      return facts;
    });
  }

  private named(key: string, id: OperationId, paged: boolean): Promise<Named[]> {
    return this.cached(key, async () => {
      const out: Named[] = [];
      for (const item of await this.walk(this.api.operation(id), paged ? 200 : null)) {
        const { id, name } = item as { id?: unknown; name?: unknown };
        if (typeof id === "string") out.push({ id, name: typeof name === "string" ? name : "" });
      }
      return out;
    });
  }

  /** Every item of a list, page after page (`limit` null: the list comes whole). */
  private async walk(operation: Operation, limit: number | null): Promise<unknown[]> {
    const items: unknown[] = [];
    for (let offset = 0, pages = 0; pages < MAX_PAGES; pages++) {
      const query = limit === null ? {} : { limit, offset };
      const page = asListPage(
        (await this.api.send(operation, { query }, { requestId: directoryRequestId() })).data,
      );
      items.push(...page.items);
      offset += page.items.length;
      if (limit === null || page.items.length === 0 || offset >= page.total) break;
    }
    return items;
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

/**
 * The request id of the directory's reads: the API's logs (and tests) can tell the server's own
 * upkeep from what a caller asked for.
 */
export const DIRECTORY_REQUEST_PREFIX = "pmcp-directory-";
const directoryRequestId = () => `${DIRECTORY_REQUEST_PREFIX}${randomUUID()}`;

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
