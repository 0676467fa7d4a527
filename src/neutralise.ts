/**
 * The one function every string crossing a trust boundary goes through on its way to a person
 * or a model: text from the API (names, notes, titles, any field) or from the model (a draft's
 * values). Nothing it returns can hide from whoever reads it (github-mcp-server's sanitiser of
 * invisible characters, DESIGN habit 11):
 *
 * - controls, format characters (bidirectional overrides and isolates, zero-width characters,
 *   the Arabic letter mark, the deprecated format controls U+206A-206F, interlinear annotation
 *   U+FFF9-FFFB, the tag characters U+E0000-E007F that can spell hidden instructions to a later
 *   model), variation selectors, private-use and invisible filler characters become a visible
 *   escape: [U+202E];
 * - line and paragraph separators (and VT, FF, NEL, a lone CR) become ⏎; line feeds and tabs
 *   too, unless the text is shown on several lines (`lines: true`: a note's content in a read
 *   result, whose line feeds are its own);
 * - a text longer than `max` is cut, with a count of what was left out.
 */

export interface NeutraliseOptions {
  /** Keep line feeds (CRLF becomes LF) and tabs; every other break is still ⏎. Default false. */
  lines?: boolean;
  /** Longest text shown, in characters; default: all of it. */
  max?: number;
}

const LINE_MARK = " ⏎ ";
// What a renderer may take for a new line: CRLF, LF, CR, VT, FF, NEL, LS, PS.
const ANY_BREAK = /\r\n|[\n\v\f\r\u0085\u2028\u2029]/g;
// The same but the line feed (and CRLF, made one): shown as they are in multi-line text.
const OTHER_BREAK = /\r(?!\n)|[\v\f\u0085\u2028\u2029]/g;
// Controls, format characters, private use, lone surrogates and noncharacters, the combining
// grapheme joiner, Hangul and Khmer fillers, Mongolian selectors, variation selectors (all but
// VS16, the emoji presentation selector, which hides nothing on its own).
const HIDDEN =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each is matched alone, on purpose
  /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0e\uffa0\ufffe\uffff\u{e0100}-\u{e01ef}]/gu;

export function neutralise(text: string, options: NeutraliseOptions = {}): string {
  const broken = options.lines
    ? text.replace(/\r\n/g, "\n").replace(OTHER_BREAK, LINE_MARK)
    : text.replace(ANY_BREAK, LINE_MARK);
  const shown = broken.replace(HIDDEN, (c) => {
    if (c === "\t") return options.lines ? c : " "; // a tab hides nothing: a space on one line
    return c === "\n" && options.lines ? c : visibleEscape(c);
  });
  return options.max === undefined ? shown : capped(shown, options.max);
}

/** Whether a text holds anything `neutralise` would change (other than its length). */
export function needsNeutralising(text: string, lines = false): boolean {
  return neutralise(text, { lines }) !== text;
}

/**
 * A JSON value with every string, object keys included, neutralised for multi-line display:
 * what a read result carries to the model and to whatever shows it. Types and shape are kept.
 */
export function neutraliseDeep<T>(value: T): T {
  if (typeof value === "string") return neutralise(value, { lines: true }) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const next = neutraliseDeep(item);
      if (next !== item) changed = true;
      return next;
    });
    return (changed ? out : value) as T;
  }
  if (value !== null && typeof value === "object") {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const name = neutralise(key, { lines: false });
      const next = neutraliseDeep(item);
      if (name !== key || next !== item) changed = true;
      out[name] = next;
    }
    return (changed ? out : value) as T;
  }
  return value;
}

/** A text cut to `max` characters (code points), with a count of the rest. */
export function capped(text: string, max: number): string {
  if (text.length <= max) return text; // code units ≥ code points: nothing to cut
  const chars = [...text];
  if (chars.length <= max) return text;
  return `${chars.slice(0, max).join("")}… (${chars.length - max} more characters not shown)`;
}

function visibleEscape(c: string): string {
  return `[U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}]`;
}
