import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toResult } from "../src/mcp/tools.js";
import { isPlain, isPlainCell, neutralise, vouchPlain } from "../src/neutralise.js";
import { fitToBudget, listOutput } from "../src/toolkit/budget.js";

/**
 * A list's rendering tests each value once for its cell and for `neutralise` (toolkit/budget.ts);
 * a list found plain is not tested again in its result. The result must be the one the full
 * neutralising gives, whatever the items hold.
 */
const record = (list: object) => list as Record<string, unknown>;

describe("a list found plain while rendered", () => {
  const nasty = [
    "|",
    "\r",
    "\n",
    "\r\n",
    "\t",
    "\u202e",
    "\u2028",
    "\u00ad",
    "\ud800",
    "❤\ufe0f",
    "é",
    "–",
    "œ",
    "€",
  ];
  const text = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.array(fc.constantFrom(...nasty, "a", " ", "Z"), { maxLength: 6 }).map((a) => a.join("")),
    fc.string({ unit: "binary", maxLength: 8 }),
  );
  const value = fc.oneof(
    text,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(text, { maxLength: 2 }),
  );
  const key = fc.oneof(fc.constantFrom("id", "name", "spv_id"), text);
  const item = fc.dictionary(key, value, { maxKeys: 4 });
  const items = fc.oneof(
    fc.array(item, { maxLength: 5 }),
    // the common case: one shape, every item alike
    fc.array(fc.record({ id: text, name: text, n: value }), { maxLength: 5 }),
  );

  it("gives the result the full neutralising gives", () => {
    fc.assert(
      fc.property(items, fc.option(text), (list, note) => {
        const make = () => {
          const out = listOutput(structuredClone(list), list.length, 0);
          if (note !== null) out.note = note;
          return fitToBudget(out, "a hint");
        };
        const fitted = make();
        if (fitted.plain) for (const row of fitted.list.items) vouchPlain(row);
        const fast = toResult({
          structured: record(fitted.list),
          text: fitted.text,
          plain: fitted.plain,
        });
        const full = make();
        expect(fast).toEqual(toResult({ structured: record(full.list), text: full.text }));
      }),
      { numRuns: 2000 },
    );
  });

  it("finds the common case plain", () => {
    const fitted = fitToBudget(
      listOutput([{ id: "a1", name: "Cœur – Montreuil", amount: "1.00", n: 3, ok: null }], 1, 0),
      "a hint",
    );
    expect(fitted.plain).toBe(true);
  });

  it("tests each character as neutralise and a table cell would", () => {
    for (let point = 0; point < 0x10000; point++) {
      const c = String.fromCharCode(point);
      for (const lines of [false, true])
        if (isPlain(c, lines)) expect(neutralise(`a${c}b`, { lines })).toBe(`a${c}b`);
      if (isPlainCell(c)) {
        expect(isPlain(c)).toBe(true);
        expect("\r\n|".includes(c)).toBe(false);
      }
    }
  });
});
