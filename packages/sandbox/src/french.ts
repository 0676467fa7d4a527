/** How the sandbox writes numbers and dates in French text (documents, narratives). */

/** `"3450000.5"` -> `"3 450 000,50"`: a decimal string, never a float, in French notation. */
export function frenchDecimal(value: string | number, decimals = 2): string {
  const text = typeof value === "number" ? value.toFixed(decimals) : value;
  const [units = "0", fraction = ""] = text.replace(/^\+/, "").split(".");
  const sign = units.startsWith("-") ? "-" : "";
  const grouped = units.replace("-", "").replace(/\B(?=(\d{3})+(?!\d))/g, " ");
  const digits = fraction.padEnd(decimals, "0").slice(0, decimals);
  return decimals === 0 ? `${sign}${grouped}` : `${sign}${grouped},${digits}`;
}

/** An amount in euros: `3 450 000,00 EUR`. */
export function frenchEuros(value: string | number): string {
  return `${frenchDecimal(value)} EUR`;
}

/** `2026-09-15` -> `15/09/2026`. */
export function frenchDate(day: string): string {
  const [year, month, date] = day.slice(0, 10).split("-");
  return `${date}/${month}/${year}`;
}

const MONTHS = [
  "janvier",
  "février",
  "mars",
  "avril",
  "mai",
  "juin",
  "juillet",
  "août",
  "septembre",
  "octobre",
  "novembre",
  "décembre",
];

/** `2026-09-01` -> `1er septembre 2026`. */
export function frenchLongDate(day: string): string {
  const [year, month, date] = day.slice(0, 10).split("-").map(Number);
  return `${date === 1 ? "1er" : date} ${MONTHS[(month ?? 1) - 1]} ${year}`;
}

/**
 * Lower case without accents, for matching what a user typed against French text. Each
 * character folds to one of the same length, so a match's offsets are the original's too.
 */
export function folded(text: string): string {
  let out = "";
  for (const char of text) {
    const plain = char
      .normalize("NFD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase();
    const lower = char.toLowerCase();
    out += plain.length === char.length ? plain : lower.length === char.length ? lower : char;
  }
  return out;
}
