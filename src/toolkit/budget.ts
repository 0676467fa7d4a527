import { isPlain, isPlainCell } from "../neutralise.js";

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
  /**
   * Found while rendering: the text and every item shown (its keys, and its values: plain
   * strings, numbers, booleans or null) hold nothing but plain characters (src/neutralise.ts),
   * which `neutralise` leaves as they are.
   */
  plain?: boolean;
}

/**
 * The list as the assistant reads it: a header, then one row per item under a line naming
 * the columns. A table says the keys once instead of once per item: about half the
 * characters of the same list in JSON.
 *
 * Both renderings must fit the budget: rows are cut, whole, once the table or the JSON (its
 * size is counted while rendering, never by serialising twice) would exceed it, and a note
 * says how to get the rest.
 *
 * Each value is tested once for what a cell and `neutralise` both need, so that a list found
 * plain throughout need not be tested again (`plain`).
 */
export function fitToBudget<T extends object>(
  list: ListOutput<T>,
  narrowHint: string,
  budget = OUTPUT_BUDGET_CHARS,
): Fitted<T> {
  const columns = list.items.length > 0 ? Object.keys(list.items[0] as object) : [];
  const columnsPlain = columns.every((column) => isPlain(column));
  const rows: string[] = [];
  let plain = columnsPlain;
  let textSize = 400; // header, column line and a possible note
  let jsonSize = 400;
  for (const item of list.items) {
    const rendered = renderRow(item as Record<string, unknown>, columns, columnsPlain);
    textSize += rendered.row.length + 1;
    jsonSize += rendered.json;
    if (textSize > budget || jsonSize > budget) break;
    rows.push(rendered.row);
    plain &&= rendered.plain;
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
  if (fitted.note && plain) plain = isPlain(fitted.note, true);
  return { list: fitted, text: lines.join("\n"), plain };
}

/**
 * One item's row, the size of its JSON, and whether all of it is plain: its keys the columns,
 * each value a plain cell, a number, a boolean or null.
 */
function renderRow(
  item: Record<string, unknown>,
  columns: readonly string[],
  columnsPlain: boolean,
): { row: string; json: number; plain: boolean } {
  let row = "";
  let json = 2;
  let plain = columnsPlain && sameKeys(item, columns);
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i] as string;
    const value = item[column];
    let cell: string;
    if (typeof value === "string" && isPlainCell(value)) cell = value;
    else {
      cell = renderCell(value);
      plain &&= value === null || typeof value === "number" || typeof value === "boolean";
    }
    row += i === 0 ? cell : ` | ${cell}`;
    json += column.length + 4 + (typeof value === "string" ? cell.length + 2 : cell.length || 4);
  }
  return { row, json, plain };
}

/** Whether a record's own keys are exactly these, in this order. */
function sameKeys(item: object, columns: readonly string[]): boolean {
  const keys = Object.keys(item);
  if (keys.length !== columns.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== columns[i]) return false;
  return true;
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
