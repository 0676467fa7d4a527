import type { Operation } from "../api/catalogue.js";
import type { ApiResult } from "../api/client.js";
import { asListPage, withoutShareTokens, XLSX_MIME } from "../api/response.js";
import { fitToBudget, listOutput, OUTPUT_BUDGET_CHARS } from "../toolkit/budget.js";
import type { ToolContext, ToolOutput } from "../toolkit/definitions.js";
import { previewText, summariseWorkbook } from "../toolkit/inrev.js";
import { withNames } from "../toolkit/names.js";
import { followUps, renderSteps, statusRead } from "../toolkit/next-steps.js";

/** Files larger than this are described, not carried: a context is no place for them. */
export const EMBED_MAX_BYTES = 2 * 1_048_576;
/** Longest text kept in a list cell; the operation's detail read gives the rest. */
const CELL_MAX = 200;

export interface ReadAnswer {
  operation: string;
  status: number;
  [key: string]: unknown;
}

/**
 * A generic read's answer, within the same budget as the curated tools: a page becomes a table
 * of compact items with `total` and `next_offset`, the ids of its rows named (toolkit/names.ts); a record is kept whole when it fits and its
 * longest lists are cut (with a note) when it does not; a file comes as an embedded resource.
 */
export async function shapeAnswer(
  op: Operation,
  path: Record<string, unknown>,
  query: Record<string, unknown>,
  result: ApiResult,
  ctx: ToolContext,
): Promise<ToolOutput<ReadAnswer>> {
  const answer = await shaped({ op, path, query, result }, ctx);
  // What to do next with what was read: the items' follow-ups, or a created job's status read.
  const next = op.contract?.creates ? statusRead(op, ctx) : followUps(op.path, ctx);
  if (next.length === 0) return answer;
  return {
    ...answer,
    structured: { ...answer.structured, next },
    ...(answer.text ? { text: `${answer.text}\n${renderSteps(next)}` } : {}),
  };
}

/** The answer itself: a file, a page of items, or one record, each within the budget. */
async function shaped(
  read: {
    op: Operation;
    path: Record<string, unknown>;
    query: Record<string, unknown>;
    result: ApiResult;
  },
  ctx: ToolContext,
): Promise<ToolOutput<ReadAnswer>> {
  const { op, path, query, result } = read;
  const base = { operation: op.id, status: result.status };
  if (Buffer.isBuffer(result.data))
    return fileAnswer(op, path, result.data, result.contentType, base);
  const data = withoutShareTokens(result.data);
  if (isPage(data)) {
    const page = asListPage(data);
    const offset = typeof query.offset === "number" ? query.offset : 0;
    const { list, text } = fitToBudget(
      listOutput(
        uniformItems(await withNames(page.items.map(compactItem), ctx)),
        page.total,
        offset,
      ),
      "a filter of the operation, or a smaller limit",
    );
    return { structured: { ...base, ...list }, text: `${op.id}: ${text}` };
  }
  const { value, note } = fitValue(data, OUTPUT_BUDGET_CHARS, narrowing(op));
  return { structured: { ...base, result: value, ...(note ? { note } : {}) } };
}

/** A list answer: a bare array, or an envelope holding one beside its total. */
function isPage(data: unknown): boolean {
  if (Array.isArray(data)) return true;
  if (!data || typeof data !== "object") return false;
  const envelope = data as Record<string, unknown>;
  return ["items", "data", "results"].some((k) => Array.isArray(envelope[k]));
}

/** Nested items kept in a list row; the record's own read gives them all. */
const NESTED_ITEMS = 3;

/**
 * One list row: scalars as they are (long texts clipped); nested values shortened by whole
 * items, never replaced by a placeholder: a list keeps its first items, an object its scalar
 * fields, so every value keeps its type.
 */
function compactItem(raw: unknown): Record<string, unknown> {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { value: raw };
  return Object.fromEntries(
    Object.entries(raw).map(([key, value]) => [key, compactValue(value, 1)]),
  );
}

function compactValue(value: unknown, depth: number): unknown {
  if (typeof value === "string")
    return value.length > CELL_MAX ? `${value.slice(0, CELL_MAX)}…` : value;
  if (Array.isArray(value))
    return depth > 1 ? [] : value.slice(0, NESTED_ITEMS).map((v) => compactValue(v, depth + 1));
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v === null || typeof v !== "object")
        .map(([k, v]) => [k, compactValue(v, depth + 1)]),
    );
  return value;
}

/** Every row with the same columns (the table names them once), in first-seen order. */
function uniformItems(items: Record<string, unknown>[]): Record<string, unknown>[] {
  const columns = [...new Set(items.flatMap((i) => Object.keys(i)))];
  return items.map((i) => Object.fromEntries(columns.map((c) => [c, i[c] ?? null])));
}

/** How to get the rest of a cut answer: the operation's own filters, by name. */
function narrowing(op: Operation): string {
  const params = (op.contract?.queryParameters ?? []).map((p) => p.name);
  const filters = params.filter((p) => p !== "offset");
  return filters.length > 0
    ? `Narrow the query with ${filters.join(", ")} for the rest.`
    : "Narrow the query for the rest.";
}

/**
 * A record within the budget: whole when it fits; otherwise its longest innermost arrays are
 * halved, again and again (a board keeps every column and shortens the tasks in each), and the
 * note says which were cut and how to get the rest.
 */
export function fitValue(
  value: unknown,
  budget: number,
  howToNarrow = "Narrow the query for the rest.",
): { value: unknown; note?: string } {
  if (JSON.stringify(value ?? null).length <= budget) return { value };
  const copy = structuredClone(value) as unknown;
  const cut = new Map<string, number>();
  for (let round = 0; round < 40 && JSON.stringify(copy).length > budget; round++) {
    const longest = longestArray(copy, "");
    if (!longest || longest.array.length <= 1) break;
    cut.set(longest.path, cut.get(longest.path) ?? longest.array.length);
    longest.array.splice(Math.ceil(longest.array.length / 2));
  }
  let text = JSON.stringify(copy);
  if (text.length > budget) text = `${text.slice(0, budget)}…`;
  const fitted = text.endsWith("…") ? text : (JSON.parse(text) as unknown);
  const lists = [...cut].map(([path, n]) => `${path || "the answer"} (${n} items)`).join(", ");
  return {
    value: fitted,
    note: `Cut to fit the context budget${lists ? `: ${lists} shortened` : ""}. ${howToNarrow}`,
  };
}

function hasLongArray(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 1 || value.some(hasLongArray);
  return !!value && typeof value === "object" && Object.values(value).some(hasLongArray);
}

function longestArray(value: unknown, path: string): { path: string; array: unknown[] } | null {
  let best: { path: string; array: unknown[]; size: number } | null = null;
  const visit = (node: unknown, at: string) => {
    if (Array.isArray(node)) {
      // An array holding other cuttable arrays is cut through them first.
      const holdsLists = node.some((child) => hasLongArray(child));
      const size = JSON.stringify(node).length;
      if (!holdsLists && node.length > 1 && (!best || size > best.size))
        best = { path: at, array: node, size };
      for (const [i, child] of node.entries()) visit(child, `${at}[${i}]`);
    } else if (node && typeof node === "object") {
      for (const [key, child] of Object.entries(node)) visit(child, at ? `${at}.${key}` : key);
    }
  };
  visit(value, path);
  return best;
}

/**
 * The text of a file, for the assistant to read: a PDF's text (extracted with unpdf, a build of
 * Mozilla's pdf.js that needs no native module and downloads nothing), a workbook's first rows
 * of each sheet, a text file as it is; cut to the output budget, with a note. Null for other
 * types, or a PDF without a text layer (a scan).
 */
async function textOf(
  bytes: Buffer,
  type: string,
): Promise<{ text: string; pages?: number; note?: string } | null> {
  let text: string;
  let pages: number | undefined;
  if (type === "application/pdf") {
    const { extractText, getDocumentProxy } = await import("unpdf");
    try {
      const pdf = await getDocumentProxy(new Uint8Array(bytes));
      const extracted = await extractText(pdf, { mergePages: true });
      text = extracted.text.trim();
      pages = extracted.totalPages;
    } catch {
      return { text: "", note: "The PDF could not be read as text." };
    }
    if (text === "") return { text: "", pages, note: "The PDF has no text layer (a scan)." };
  } else if (type === XLSX_MIME) {
    text = previewText(await summariseWorkbook(bytes, "file.xlsx"));
  } else if (/^text\/|json|csv|xml/.test(type)) {
    text = bytes.toString("utf8");
  } else return null;
  if (text.length <= TEXT_BUDGET) return { text, ...(pages ? { pages } : {}) };
  return {
    text: `${text.slice(0, TEXT_BUDGET)}…`,
    ...(pages ? { pages } : {}),
    note: `The text is cut at ${TEXT_BUDGET} of ${text.length} characters; the whole file is attached.`,
  };
}

/** What a file's text may take of a result: most of the budget, the rest for its description. */
const TEXT_BUDGET = OUTPUT_BUDGET_CHARS - 2_000;

async function fileAnswer(
  op: Operation,
  path: Record<string, unknown>,
  bytes: Buffer,
  contentType: string,
  base: { operation: string; status: number },
): Promise<ToolOutput<ReadAnswer>> {
  const type = contentType.split(";")[0]?.trim() || "application/octet-stream";
  const file = { content_type: type, bytes: bytes.length };
  const uri = `portfolio://api/${op.id}/${Object.values(path)
    .map((v) => encodeURIComponent(String(v)))
    .join("/")}`;
  if (bytes.length > EMBED_MAX_BYTES) {
    return {
      structured: {
        ...base,
        file,
        note: `The file is ${bytes.length} bytes, more than the ${EMBED_MAX_BYTES} a result carries; it was not included.`,
      },
    };
  }
  const isText = /^text\/|json|csv|xml/.test(type);
  const read = await textOf(bytes, type);
  const notes = [`The file is attached as an embedded resource (${uri}).`, read?.note].filter(
    (n): n is string => !!n,
  );
  return {
    structured: {
      ...base,
      file: { ...file, ...(read?.pages ? { pages: read.pages } : {}) },
      ...(read?.text ? { text: read.text } : {}),
      note: notes.join(" "),
    },
    // The text is read from the result; the file itself travels as a resource, not as JSON.
    text: [`${op.id}: ${type}, ${bytes.length} bytes. ${notes.join(" ")}`, read?.text ?? ""]
      .filter((t) => t !== "")
      .join("\n\n"),
    blocks: [
      {
        type: "resource",
        resource: isText
          ? { uri, mimeType: type, text: bytes.toString("utf8") }
          : { uri, mimeType: type, blob: bytes.toString("base64") },
      },
    ],
  };
}
