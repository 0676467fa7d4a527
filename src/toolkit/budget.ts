/** Roughly what a tool result may take in the assistant's context (DESIGN: context is a budget). */
export const OUTPUT_BUDGET_CHARS = 20_000;

export interface ListOutput<T> {
  items: T[];
  total: number;
  offset: number;
  next_offset: number | null;
  note?: string;
}

/** A page as a list result: where the next page starts, if anywhere. */
export function listOutput<T>(items: T[], total: number, offset: number): ListOutput<T> {
  const end = offset + items.length;
  return { items, total, offset, next_offset: end < total && items.length > 0 ? end : null };
}

/** A list that fits the budget, and its text rendering for the assistant. */
export interface Fitted<T> {
  list: ListOutput<T>;
  text: string;
}

/**
 * The list as the assistant reads it: a header, then one row per item under a line naming
 * the columns. A table says the keys once instead of once per item: about half the
 * characters of the same list in JSON.
 *
 * Both renderings must fit the budget: rows are cut, whole, once the table or the JSON (its
 * size is counted while rendering, never by serialising twice) would exceed it, and a note
 * says how to get the rest.
 */
export function fitToBudget<T extends object>(
  list: ListOutput<T>,
  narrowHint: string,
  budget = OUTPUT_BUDGET_CHARS,
): Fitted<T> {
  const columns = list.items.length > 0 ? Object.keys(list.items[0] as object) : [];
  const rows: string[] = [];
  let textSize = 400; // header, column line and a possible note
  let jsonSize = 400;
  for (const item of list.items) {
    let row = "";
    let itemJson = 2;
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i] as string;
      const value = (item as Record<string, unknown>)[column];
      const cell = renderCell(value);
      row += i === 0 ? cell : ` | ${cell}`;
      itemJson +=
        column.length + 4 + (typeof value === "string" ? cell.length + 2 : cell.length || 4);
    }
    textSize += row.length + 1;
    jsonSize += itemJson;
    if (textSize > budget || jsonSize > budget) break;
    rows.push(row);
  }
  let fitted = list;
  if (rows.length < list.items.length) {
    const next = list.offset + rows.length;
    fitted = {
      items: list.items.slice(0, rows.length),
      total: list.total,
      offset: list.offset,
      next_offset: next < list.total ? next : null,
      note: `Cut to ${rows.length} of ${list.items.length} items to fit the context budget. Continue with offset=${next}, or narrow the query (${narrowHint}).`,
    };
  }
  const shown = fitted.items.length;
  const header = `${fitted.total} in total; ${shown === 0 ? "none shown" : `items ${fitted.offset + 1}-${fitted.offset + shown}`}; ${fitted.next_offset === null ? "last page" : `next_offset ${fitted.next_offset}`}`;
  const lines = shown === 0 ? [header] : [header, columns.join(" | "), ...rows];
  if (fitted.note) lines.push(fitted.note);
  return { list: fitted, text: lines.join("\n") };
}

/** What would break a table row: a line break or a `|` (tested first: most cells hold none). */
const CELL_BREAK = /[\r\n|]/;

/** One table cell: empty for null, one line for text, JSON for nested values. */
function renderCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string")
    return CELL_BREAK.test(value) ? value.replace(/[\r\n|]+/g, " ") : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null))
    return value.join(", ");
  return JSON.stringify(value);
}
