import type { DocumentFacts, Named } from "../api/directory.js";
import type { ToolContext } from "./definitions.js";

/**
 * What a list's rows point to, said beside the ids: `operation_name` after `operation_id`,
 * `spv_name` after `spv_id`, a document's date, type and size after `document_id`. Taken from
 * the directory the server keeps (src/api/directory.ts: each list walked once a minute for every
 * client), never from a read per row; and only from a list this caller is offered, so that no
 * tool tells what the caller's own tools could not read. A name the directory does not know
 * (a record made within the minute, or past its walk) is null; a directory that cannot be read
 * leaves the rows as they are: the list stands without the names.
 */
interface Reference {
  /** The row's key holding the id. */
  key: string;
  /** The list the facts come from: offered to the caller, or not said. */
  list: string;
  facts(ctx: ToolContext): Promise<ReadonlyMap<string, object>>;
}

const byName = (field: string) => (named: Named[]) =>
  new Map(named.map(({ id, name }) => [id.toLowerCase(), { [field]: name || null }]));

const REFERENCES: readonly Reference[] = [
  {
    key: "operation_id",
    list: "operations_list",
    facts: async (ctx) => byName("operation_name")(await ctx.directory.operations()),
  },
  {
    key: "spv_id",
    list: "spvs_list",
    facts: async (ctx) => byName("spv_name")(await ctx.directory.spvs()),
  },
  {
    key: "document_id",
    list: "documents_list",
    facts: (ctx) => ctx.directory.documents(),
  },
];

/** The fields each reference adds, in order: those a row lacks are added as null. */
const ADDS: Record<string, readonly string[]> = {
  operation_id: ["operation_name"],
  spv_id: ["spv_name"],
  document_id: ["document_date", "content_type", "size_bytes"],
};

/**
 * The rows with what their ids point to beside them. A field the row already has with a value
 * (the API's own `operation_name`) is kept; a missing or null one is filled. Rows keep their
 * key order, the added fields placed just after the id.
 */
export async function withNames<T extends object>(rows: T[], ctx: ToolContext): Promise<T[]> {
  const wanted = REFERENCES.filter(
    (ref) =>
      ctx.offer.offered.has(ref.list) &&
      rows.some((row) => typeof (row as Record<string, unknown>)[ref.key] === "string"),
  );
  if (wanted.length === 0) return rows;
  const known = await Promise.all(wanted.map((ref) => factsOf(ref, ctx)));
  const named = wanted.map((ref, i) => ({ key: ref.key, facts: known[i] ?? null }));
  return rows.map((row) => {
    const source = row as Record<string, unknown>;
    // A row that already holds each added field just after its id (a projection's, toolkit/
    // present.ts) keeps its layout: a copy with the blanks filled, as the general case makes.
    if (!inPlace(source, named)) return placed(source, named) as T;
    const out: Record<string, unknown> = { ...source };
    for (const { key, facts } of named) {
      if (facts === null) continue;
      const id = source[key];
      const found = (typeof id === "string" ? facts.get(id.toLowerCase()) : undefined) as
        | Record<string, unknown>
        | undefined;
      for (const field of ADDS[key] ?? []) out[field] = source[field] ?? found?.[field] ?? null;
    }
    return out as T;
  });
}

interface Lookup {
  key: string;
  /** The directory's facts by id; null when they could not be read (the row is left as it is). */
  facts: ReadonlyMap<string, object> | null;
}

/** Whether every field a reference adds sits in the row right after the key holding its id. */
function inPlace(row: Record<string, unknown>, named: readonly Lookup[]): boolean {
  const keys = Object.keys(row);
  for (const { key } of named) {
    const at = keys.indexOf(key);
    if (at < 0) continue;
    const adds = ADDS[key] ?? [];
    for (let j = 0; j < adds.length; j++) if (keys[at + 1 + j] !== adds[j]) return false;
  }
  return true;
}

/** The row rebuilt with each reference's fields placed just after its id. */
function placed(
  source: Record<string, unknown>,
  named: readonly Lookup[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (key in out) continue; // placed earlier, beside its id
    out[key] = value;
    const ref = named.find((n) => n.key === key);
    if (!ref || ref.facts === null) continue;
    const facts = (typeof value === "string" ? ref.facts.get(value.toLowerCase()) : undefined) as
      | Record<string, unknown>
      | undefined;
    for (const field of ADDS[key] ?? []) out[field] = source[field] ?? facts?.[field] ?? null;
  }
  return out;
}

/** A document's date, type and size by its id, when this caller may list documents. */
export async function documentFacts(
  ctx: ToolContext,
): Promise<ReadonlyMap<string, DocumentFacts> | null> {
  const ref = REFERENCES.find((r) => r.key === "document_id") as Reference;
  if (!ctx.offer.offered.has(ref.list)) return null;
  return (await factsOf(ref, ctx)) as ReadonlyMap<string, DocumentFacts> | null;
}

async function factsOf(
  ref: Reference,
  ctx: ToolContext,
): Promise<ReadonlyMap<string, object> | null> {
  try {
    return await ref.facts(ctx);
  } catch (error) {
    ctx.logger.debug({ err: error, list: ref.list }, "names for a list not read");
    return null;
  }
}
