import { capped, neutraliseDeep, neutralise as neutraliseText } from "../neutralise.js";
import type { Preview } from "./intent.js";

/**
 * Untrusted text (names, titles, field values from the API or the model) as it may appear in
 * what a human approves, through the one neutralising function (src/neutralise.ts): nothing it
 * contains can start a line, hide a line or end a quote.
 */

/** Longest value the confirmation form shows whole; longer ones show their ends and size. */
export const SHOWN_VALUE_MAX = 4_000;
/** Of a longer value: about this much of its start and of its end. */
const ENDS = 1_500;

/** One line, nothing hidden, quote marks straightened (for texts inside «»), capped. */
export function neutralise(text: string, max = Number.POSITIVE_INFINITY): string {
  return capped(neutraliseText(text).replace(/[«»]/g, '"'), max);
}

/** One line, nothing hidden; quote marks kept (for texts that quote untrusted parts). */
export function flatten(text: string): string {
  return neutraliseText(text);
}

export { capped };

/** An untrusted text inside visible quotes: «Les Terrasses du Parc». */
export function quote(text: string, max = Number.POSITIVE_INFINITY): string {
  return `«${neutralise(text, max)}»`;
}

/**
 * A field value as the confirmation form shows it: null as "cleared" (absent and null differ,
 * spec part 2), texts quoted, other values as compact JSON; all neutralised. A value longer
 * than the form shows whole keeps its first and last lines, with its size and how much of the
 * middle is not shown: never only its first sentence.
 */
export function showValue(value: unknown): string {
  if (value === null) return "cleared (null)";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const flat = neutralise(text);
  const chars = [...flat];
  const shown =
    chars.length <= SHOWN_VALUE_MAX
      ? flat
      : `${ends(chars, "start")} … ${chars.length - 2 * ENDS} more characters … ${ends(chars, "end")} (${chars.length} characters in all)`;
  return typeof value === "string" ? `«${shown}»` : shown;
}

/** About ENDS characters of one end, cut at a line mark when one is near. */
function ends(chars: string[], which: "start" | "end"): string {
  const part = which === "start" ? chars.slice(0, ENDS) : chars.slice(-ENDS);
  const text = part.join("");
  const mark = which === "start" ? text.lastIndexOf("⏎") : text.indexOf("⏎");
  if (mark === -1 || Math.abs(mark - (which === "start" ? text.length : 0)) > ENDS / 3) return text;
  return which === "start" ? text.slice(0, mark + 1) : text.slice(mark);
}

/** The first words of a text, for a one-line summary. */
export function firstWords(text: string, max = 60): string {
  const flat = neutralise(text).replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/**
 * The preview with every untrusted string neutralised; the one-line parts are capped here,
 * field values when they are shown (previewText), so the model still gets them whole.
 */
export function displayed(preview: Preview): Preview {
  return {
    ...preview,
    // Tools quote the untrusted parts of these (quote()); here they are kept to one line.
    // Whole, as long as a person can read them (a name is shown whole, however long).
    action: capped(flatten(preview.action), SHOWN_VALUE_MAX),
    target: capped(flatten(preview.target), SHOWN_VALUE_MAX),
    recorded_as: capped(flatten(preview.recorded_as), SHOWN_VALUE_MAX),
    fields: Object.fromEntries(
      Object.entries(preview.fields).map(([name, value]) => [
        neutralise(name, 64),
        typeof value === "string" ? neutralise(value) : neutraliseDeep(value),
      ]),
    ),
    ...(preview.warnings ? { warnings: preview.warnings.map((w) => flatten(w)) } : {}),
  };
}
