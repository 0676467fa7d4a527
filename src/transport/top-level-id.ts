/**
 * What a JSON-RPC message too large to hold says about itself at its top level, read as its
 * bytes stream past and never kept: its `id` (wherever it comes, first or after megabytes of
 * params), and whether it is a request (`method`) or an answer (`result` / `error`). Nested
 * objects and strings are skipped, so an `"id"` inside the params is never taken for it.
 */
export interface TopLevelFacts {
  /** A string or number id; null when there is none, or none that can be read (too long). */
  id: string | number | null;
  /** It has a top-level `method`: a request or notification. */
  method: boolean;
  /** It has a top-level `result` or `error` (and no method): an answer to one of our requests. */
  answer: boolean;
}

/** Longer key or value texts are not what this looks for (the id's text is capped too). */
const MAX_KEY_BYTES = 64;
const MAX_ID_BYTES = 256;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

type Expect = "start" | "key" | "colon" | "value" | "after" | "done";

export class TopLevelScan {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expect: Expect = "start";
  /** What the current top-level string or primitive is being kept for, if anything. */
  private keeping: "key" | "value" | null = null;
  private primitive = false;
  private kept: number[] = [];
  private overflow = false;
  private key: string | null = null;
  private facts: TopLevelFacts = { id: null, method: false, answer: false };
  private sawResult = false;

  feed(bytes: Buffer): void {
    for (let i = 0; i < bytes.length && this.expect !== "done"; i++) {
      const b = bytes[i] as number;
      if (this.inString) {
        if (this.keeping === null && !this.escaped) {
          // Skip to the next quote or backslash: most of a large message is long strings.
          const next = nextOf(bytes, i);
          if (next === -1) return;
          i = next;
        }
        this.inString = this.stringByte(bytes[i] as number);
        continue;
      }
      if (this.primitive) {
        if (isDelimiter(b)) this.endValue();
        else {
          this.keep(b);
          continue;
        }
      }
      this.structural(b);
    }
  }

  result(): TopLevelFacts {
    if (this.primitive) this.endValue();
    return { ...this.facts, answer: this.sawResult && !this.facts.method };
  }

  /** One byte inside a string; false once the string has ended. */
  private stringByte(b: number): boolean {
    if (this.escaped) {
      this.escaped = false;
      this.keep(b);
      return true;
    }
    if (b === BACKSLASH) {
      this.escaped = true;
      this.keep(b);
      return true;
    }
    if (b !== QUOTE) {
      this.keep(b);
      return true;
    }
    if (this.keeping === "key") {
      this.key = this.overflow ? null : decodeString(this.kept);
      this.keeping = null;
      this.expect = "colon";
    } else if (this.depth === 1 && this.expect === "value") {
      this.endValue(true);
    }
    return false;
  }

  private structural(b: number): void {
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) return;
    if (this.depth === 0) {
      // Only an object has top-level members; anything else (a batch, garbage) is left alone.
      this.expect = this.expect === "start" && b === 0x7b ? "key" : "done";
      if (this.expect === "key") this.depth = 1;
      return;
    }
    if (b === QUOTE) {
      this.inString = true;
      if (this.depth !== 1) return;
      if (this.expect === "key") this.startKeeping("key");
      else if (this.expect === "value") this.startKeeping("value");
      return;
    }
    if (b === 0x7b || b === 0x5b) {
      // An object or array as a top-level value: not an id, but it may name what the message is.
      if (this.depth === 1 && this.expect === "value") this.noteKey(undefined);
      this.depth++;
      return;
    }
    if (b === 0x7d || b === 0x5d) {
      this.depth--;
      if (this.depth === 1) this.expect = "after";
      else if (this.depth === 0) this.expect = "done";
      return;
    }
    if (this.depth !== 1) return;
    if (b === 0x3a && this.expect === "colon") this.expect = "value";
    else if (b === 0x2c) this.expect = "key";
    else if (this.expect === "value") {
      this.startKeeping("value");
      this.primitive = true;
      this.keep(b);
    }
  }

  /** Keys are kept to be read; of the values, only the id's. */
  private startKeeping(what: "key" | "value"): void {
    this.keeping = what === "key" || this.key === "id" ? what : null;
    this.kept = [];
    this.overflow = false;
  }

  private keep(b: number): void {
    if (this.keeping === null) return;
    const max = this.keeping === "key" ? MAX_KEY_BYTES : MAX_ID_BYTES;
    if (this.kept.length < max) this.kept.push(b);
    else this.overflow = true;
  }

  /** A top-level value has ended (a string when `quoted`), as the value of the current key. */
  private endValue(quoted = false): void {
    const text = Buffer.from(this.kept).toString("utf8");
    let value: unknown;
    if (this.key === "id" && !this.overflow) {
      try {
        value = JSON.parse(quoted ? `"${text}"` : text);
      } catch {
        value = undefined;
      }
    }
    this.noteKey(value);
    this.primitive = false;
    this.keeping = null;
    this.kept = [];
    this.expect = "after";
  }

  private noteKey(value: unknown): void {
    if (this.key === "method") this.facts.method = true;
    else if (this.key === "result" || this.key === "error") this.sawResult = true;
    else if (this.key === "id")
      // The last one wins, as JSON.parse would read the message.
      this.facts.id = typeof value === "string" || typeof value === "number" ? value : null;
  }
}

function nextOf(bytes: Buffer, from: number): number {
  const quote = bytes.indexOf(QUOTE, from);
  const backslash = bytes.indexOf(BACKSLASH, from);
  if (quote === -1) return backslash;
  if (backslash === -1) return quote;
  return Math.min(quote, backslash);
}

const isDelimiter = (b: number) =>
  b === 0x2c || b === 0x7d || b === 0x5d || b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** A key as JSON reads it (escapes included: `"\u0069d"` is `id`). */
function decodeString(raw: number[]): string | null {
  try {
    return JSON.parse(`"${Buffer.from(raw).toString("utf8")}"`) as string;
  } catch {
    return null;
  }
}
