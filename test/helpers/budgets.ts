/**
 * What the tool listing may cost, as budgets with headroom: each figure below was measured with
 * the full demo contract when the budget was set, and a listing may grow 15 % past it. A new
 * curated read or write (0.3-2 KB of tools/list) fits; a real jump (a schema grown by kilobytes,
 * a family of tools at once) fails. Raising a figure is a reviewed change: measure, then set it.
 */
const HEADROOM = 1.15;

/** Measured 2026-11-26: `JSON.stringify` of tools/list, and what a model reads of it. */
export const MEASURED = { listingBytes: 50_311, modelVisibleBytes: 15_611 } as const;

export const budget = (measured: number) => Math.round(measured * HEADROOM);

/** The figure beside its budget, printed by the tests that hold it. */
export function report(what: string, bytes: number, measured: number): string {
  const line = `${what}: ${bytes.toLocaleString("en")} bytes (budget ${budget(measured).toLocaleString("en")}, measured ${measured.toLocaleString("en")} when set)`;
  process.stdout.write(`${line}\n`);
  return line;
}
