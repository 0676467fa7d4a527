/**
 * Untrusted text (names, titles, field values from the API or the model) as it may appear in
 * what a human approves. Nothing it contains can start a line, hide a line or end a quote: line
 * breaks and separators become a visible ⏎, other control and format characters are dropped,
 * quote marks are straightened, and the length is capped with a count of what was left out.
 */

/** Longest value shown in full in a confirmation. */
export const SHOWN_VALUE_MAX = 1_000;

// CR, LF, VT, FF, NEL, LS, PS: everything a renderer may take for a new line.
const LINE_BREAKS = /\r\n|[\n\v\f\r\u0085\u2028\u2029]/g;
// C0 and C1 controls (tab included), bidirectional overrides and invisible formatting.
const INVISIBLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
  /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

export function neutralise(text: string, max = SHOWN_VALUE_MAX): string {
  return capped(flatten(text).replace(/[«»]/g, '"'), max);
}

/** One line, nothing invisible; quote marks kept (for texts that quote untrusted parts). */
export function flatten(text: string): string {
  return text.replace(LINE_BREAKS, " ⏎ ").replace(INVISIBLE, " ");
}

export function capped(flat: string, max: number): string {
  const chars = [...flat];
  if (chars.length <= max) return flat;
  return `${chars.slice(0, max).join("")}… (${chars.length - max} more characters not shown)`;
}

/** An untrusted text inside visible quotes: «Les Terrasses du Parc». */
export function quote(text: string, max = SHOWN_VALUE_MAX): string {
  return `«${neutralise(text, max)}»`;
}

/**
 * A field value as shown: null as "cleared" (absent and null differ, spec part 2), texts
 * quoted, other values as compact JSON; all neutralised and capped.
 */
export function showValue(value: unknown): string {
  if (value === null) return "cleared (null)";
  if (typeof value === "string") return quote(value);
  return neutralise(JSON.stringify(value));
}

/** The first words of a text, for a one-line summary. */
export function firstWords(text: string, max = 60): string {
  const flat = neutralise(text, Number.POSITIVE_INFINITY).replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
