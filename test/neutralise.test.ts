import { describe, expect, it } from "vitest";
import { capped, neutralise, neutraliseDeep, scanned } from "../src/neutralise.js";

/** The one function every string from the API or the model goes through (src/neutralise.ts). */
describe("neutralise", () => {
  it.each([
    ["a bidirectional override", "a\u202eb", "a[U+202E]b"],
    ["the Arabic letter mark", "a\u061cb", "a[U+061C]b"],
    [
      "the deprecated format controls",
      "\u206a\u206b\u206c\u206d\u206e\u206f",
      "[U+206A][U+206B][U+206C][U+206D][U+206E][U+206F]",
    ],
    ["interlinear annotation", "\ufff9a\ufffab\ufffb", "[U+FFF9]a[U+FFFA]b[U+FFFB]"],
    ["zero-width characters", "a\u200b\u200c\u200d\u2060b", "a[U+200B][U+200C][U+200D][U+2060]b"],
    ["isolates", "\u2066\u2067\u2068\u2069", "[U+2066][U+2067][U+2068][U+2069]"],
    ["the byte order mark", "\ufeffa", "[U+FEFF]a"],
    [
      "tag characters that spell words",
      "ok\u{e0001}\u{e0049}\u{e0047}\u{e007f}",
      "ok[U+E0001][U+E0049][U+E0047][U+E007F]",
    ],
    ["C0 and C1 controls", "a\u0000b\u0007c\u009bd", "a[U+0000]b[U+0007]c[U+009B]d"],
    [
      "variation selectors (not the emoji one)",
      "a\ufe00b\u{e0100}c❤\ufe0f",
      "a[U+FE00]b[U+E0100]c❤\ufe0f",
    ],
    ["invisible fillers", "a\u3164b\u115fc\u034fd", "a[U+3164]b[U+115F]c[U+034F]d"],
    ["private use", "a\ue000b", "a[U+E000]b"],
    ["a lone surrogate", "a\ud800b", "a[U+D800]b"],
  ])("shows %s as a visible escape", (_what, text, shown) => {
    expect(neutralise(text)).toBe(shown);
    expect(neutralise(text, { lines: true })).toBe(shown);
  });

  it("turns every line break into ⏎ on one line, and keeps line feeds and tabs on several", () => {
    const text = "a\nb\r\nc\rd\u2028e\u2029f\u0085g\vh\fi\tj";
    expect(neutralise(text)).toBe("a ⏎ b ⏎ c ⏎ d ⏎ e ⏎ f ⏎ g ⏎ h ⏎ i j");
    expect(neutralise(text, { lines: true })).toBe("a\nb\nc ⏎ d ⏎ e ⏎ f ⏎ g ⏎ h ⏎ i\tj");
  });

  it("leaves ordinary text of any script as it is", () => {
    for (const text of ["Les Terrasses du Parc — Mérignac", "東京 · Zürich · Αθήνα", "👨‍👩‍👧"]) {
      if (text.includes("\u200d")) expect(neutralise(text)).toContain("[U+200D]");
      else expect(neutralise(text)).toBe(text);
    }
  });

  it("cuts at a length with a count of the rest, by code points", () => {
    expect(neutralise("abcdef", { max: 3 })).toBe("abc… (3 more characters not shown)");
    expect(capped("🙂🙂🙂", 3)).toBe("🙂🙂🙂");
    expect(capped("🙂🙂🙂🙂", 3)).toBe("🙂🙂🙂… (1 more characters not shown)");
  });

  it("walks JSON values, keys included, keeping types and shape, and the same object when clean", () => {
    const clean = { a: [1, true, null, "x"], b: { c: "d" } };
    expect(neutraliseDeep(clean)).toBe(clean);
    expect(
      neutraliseDeep({ "k\u202e": ["v\u2028", { n: 1, t: "line\nfeed" }], ok: false }),
    ).toEqual({ "k[U+202E]": ["v ⏎ ", { n: 1, t: "line\nfeed" }], ok: false });
  });
});

describe("neutralise's plain-text shortcut", () => {
  // Text made only of characters that never change skips the full scan: for every character of
  // the Basic Multilingual Plane and a sample beyond, alone and between letters, in both modes,
  // the answer is the full scan's.
  const astral = [0x1f600, 0x1f468, 0xe0001, 0xe0049, 0xe0100, 0xe01ef, 0xf0000, 0x10fffd];
  const points = [...Array.from({ length: 0x10000 }, (_, i) => i), ...astral];
  it.each([false, true])("answers as the full scan for every character (lines: %s)", (lines) => {
    const differing = points.filter((point) => {
      const c = String.fromCodePoint(point);
      return [c, `a${c}b`, `${c}\r\n${c}`].some(
        (text) => neutralise(text, { lines }) !== scanned(text, lines),
      );
    });
    expect(differing).toEqual([]);
  });
});
