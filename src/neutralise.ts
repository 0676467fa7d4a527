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

// Characters `neutralise` never changes: printable ASCII, Latin-1 but the soft hyphen, the rest
// of the Latin, IPA and spacing-modifier blocks, the visible general punctuation (dashes, quotes,
// bullets, primes) and currency signs. Most text from the API is made of these only: its check is
// a plain character class, far cheaper than the Unicode-property scan below (no /u flag, so an
// astral character's surrogates fall outside it and take the full scan, as does anything else).
const NOT_PLAIN = /[^\x20-\x7e\xa0-\xac\xae-\u02ff\u2010-\u2027\u2030-\u205f\u20a0-\u20c0]/;
// The same for multi-line text, which keeps its line feeds and tabs.
const NOT_PLAIN_LINES =
  /[^\t\n\x20-\x7e\xa0-\xac\xae-\u02ff\u2010-\u2027\u2030-\u205f\u20a0-\u20c0]/;

// What a table cell and `neutralise` (either way) both show as they are: the plain characters but
// the `|` that separates cells, so that a list's rendering tests each value once for both.
const NOT_PLAIN_CELL =
  /[^\x20-\x7b\x7d\x7e\xa0-\xac\xae-\u02ff\u2010-\u2027\u2030-\u205f\u20a0-\u20c0]/;

/** Whether `neutralise` leaves a text as it is without a scan (nothing in it but plain characters). */
export function isPlain(text: string, lines = false): boolean {
  return !(lines ? NOT_PLAIN_LINES : NOT_PLAIN).test(text);
}

/** Whether a text is plain (`isPlain`, either way) and holds no `|`: a table cell as it is. */
export function isPlainCell(text: string): boolean {
  return !NOT_PLAIN_CELL.test(text);
}

const VOUCHED = new WeakSet<object>();

/**
 * Records that every key of a record is plain on one line and every value a plain string, a
 * number, a boolean or null, as its maker found while rendering it (toolkit/budget.ts):
 * `neutraliseDeep` then hands it back without testing each of them again. The record must not
 * change afterwards.
 */
export function vouchPlain(record: object): void {
  VOUCHED.add(record);
}

export function neutralise(text: string, options: NeutraliseOptions = ONE_LINE): string {
  const lines = options.lines === true;
  const shown = (lines ? NOT_PLAIN_LINES : NOT_PLAIN).test(text) ? scanned(text, lines) : text;
  return options.max === undefined ? shown : capped(shown, options.max);
}

/** The full scan `neutralise` makes of a text that is not plain (exported for its test). */
export function scanned(text: string, lines: boolean): string {
  const broken = lines
    ? text.replace(/\r\n/g, "\n").replace(OTHER_BREAK, LINE_MARK)
    : text.replace(ANY_BREAK, LINE_MARK);
  return broken.replace(HIDDEN, (c) => {
    if (c === "\t") return lines ? c : " "; // a tab hides nothing: a space on one line
    return c === "\n" && lines ? c : visibleEscape(c);
  });
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
  if (typeof value === "string") return neutralise(value, MULTI_LINE) as T;
  if (Array.isArray(value)) {
    // A copy only once something in it changes: most values come back as they are.
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const next = neutraliseDeep(item);
      if (next !== item && out === null) out = value.slice(0, i);
      out?.push(next);
    }
    return (out ?? value) as T;
  }
  if (value !== null && typeof value === "object") {
    if (VOUCHED.has(value)) return value;
    const source = value as Record<string, unknown>;
    const keys = Object.keys(source);
    let out: Record<string, unknown> | null = null;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const item = source[key];
      const name = neutralise(key);
      const next = neutraliseDeep(item);
      if (out === null && (name !== key || next !== item)) {
        out = {};
        for (let j = 0; j < i; j++) out[keys[j] as string] = source[keys[j] as string];
      }
      if (out !== null) out[name] = next;
    }
    return (out ?? value) as T;
  }
  return value;
}

const ONE_LINE: NeutraliseOptions = {};
const MULTI_LINE: NeutraliseOptions = { lines: true };

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
