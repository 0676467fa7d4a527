const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/**
 * Other spellings of a sealed token (`s1.<base64url>`, or bare base64url) that Node's lenient
 * base64url decoder reads as the same bytes: it skips characters it does not know, takes the
 * standard alphabet and padding, and ignores the unused bits of the last character; and a
 * `split(".")` ignores whatever follows a second dot.
 */
export function variantsOf(token: string): Record<string, string> {
  const dot = token.indexOf(".");
  const prefix = dot === -1 ? "" : token.slice(0, dot + 1);
  const payload = dot === -1 ? token : token.slice(dot + 1);
  const last = payload.at(-1) ?? "A";
  // The lowest bit of the last character is unused unless the length is a multiple of 4.
  const sameBits =
    payload.length % 4 === 0
      ? `${payload}A`
      : `${payload.slice(0, -1)}${ALPHABET[ALPHABET.indexOf(last) ^ 1]}`;
  const middle = Math.floor(payload.length / 2);
  const variants: Record<string, string> = {
    "a suffix (space)": `${prefix}${payload} `,
    "a suffix (newline)": `${prefix}${payload}\n`,
    "a stray character": `${prefix}${payload.slice(0, middle)}!${payload.slice(middle)}`,
    padding: `${prefix}${payload}==`,
    "another last character with the same bits": `${prefix}${sameBits}`,
    "an extra .-part": `${prefix}${payload}.extra`,
  };
  if (/[-_]/.test(payload))
    variants["the standard alphabet"] = `${prefix}${payload.replace(/-/g, "+").replace(/_/g, "/")}`;
  return variants;
}

/** Whether the old reading (first `.`-part, lenient base64url) took a variant for the token. */
export function sameBytesLeniently(variant: string, token: string): boolean {
  const payload = (s: string) => {
    const parts = s.split(".");
    return (parts.length > 1 ? parts[1] : parts[0]) ?? "";
  };
  return Buffer.from(payload(variant), "base64url").equals(
    Buffer.from(payload(token), "base64url"),
  );
}
