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

/**
 * Cuts a list that would exceed the budget, keeping whole items, and says how to get the
 * rest: the next offset, or a narrower query.
 */
export function fitToBudget<T>(
  list: ListOutput<T>,
  narrowHint: string,
  budget = OUTPUT_BUDGET_CHARS,
): ListOutput<T> {
  let size = JSON.stringify({ ...list, items: [] }).length + 400; // room for the note
  let kept = 0;
  for (const item of list.items) {
    size += JSON.stringify(item).length + 1;
    if (size > budget) break;
    kept++;
  }
  if (kept === list.items.length) return list;
  const next = list.offset + kept;
  return {
    items: list.items.slice(0, kept),
    total: list.total,
    offset: list.offset,
    next_offset: next < list.total ? next : null,
    note: `Cut to ${kept} of ${list.items.length} items to fit the context budget. Continue with offset=${next}, or narrow the query (${narrowHint}).`,
  };
}
