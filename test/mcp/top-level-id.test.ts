import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TopLevelScan } from "../../src/transport/top-level-id.js";

/** The facts as JSON.parse reads the whole message: what the streaming scan must agree with. */
function parsed(text: string) {
  const m = JSON.parse(text) as Record<string, unknown>;
  const isObject = m !== null && typeof m === "object" && !Array.isArray(m);
  const id = isObject ? m.id : undefined;
  const readable =
    (typeof id === "string" && Buffer.byteLength(JSON.stringify(id)) <= 258) ||
    typeof id === "number";
  const method = isObject && "method" in m;
  return {
    id: readable ? (id as string | number) : null,
    method,
    answer: isObject && !method && ("result" in m || "error" in m),
  };
}

function scanned(text: string, cuts: number[]) {
  const bytes = Buffer.from(text, "utf8");
  const scan = new TopLevelScan();
  let from = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b)) {
    scan.feed(bytes.subarray(from, Math.max(from, cut)));
    from = Math.max(from, cut);
  }
  scan.feed(bytes.subarray(from));
  return scan.result();
}

const key = fc.oneof(
  fc.constantFrom("id", "method", "params", "result", "error", "jsonrpc", "\u0069d", "i\\d"),
  fc.string({ maxLength: 6 }),
);
/** Members in any order, values nesting "id" keys and strings that look like JSON. */
const message = fc
  .tuple(
    fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
    fc.option(fc.oneof(fc.integer(), fc.string({ maxLength: 300 }), fc.constant(null))),
    fc.nat(6),
  )
  .map(([members, id, at]) => {
    const entries = Object.entries(members).filter(([k]) => k !== "id");
    if (id !== null) entries.splice(Math.min(at, entries.length), 0, ["id", id]);
    return JSON.stringify(Object.fromEntries(entries));
  });

describe("the top-level facts of a message read as it streams", () => {
  it("agree with JSON.parse, however the bytes are cut", () => {
    fc.assert(
      fc.property(message, fc.array(fc.nat(), { maxLength: 8 }), (text, cuts) => {
        expect(scanned(text, cuts)).toEqual(parsed(text));
      }),
      { numRuns: 2000, seed: 20261122 },
    );
  });

  it("take the top-level id after megabytes, never one nested in the params", () => {
    const text = JSON.stringify({
      jsonrpc: "2.0",
      method: "tools/call",
      params: { id: "nested", arguments: { id: 99, text: `"id":5 ${"x".repeat(3_000_000)}` } },
      id: 42,
    });
    expect(scanned(text, [1024, 65_536, 2_000_000])).toEqual({
      id: 42,
      method: true,
      answer: false,
    });
    expect(scanned(`{"result":{"id":1},"jsonrpc":"2.0","id":"e-7"}`, [3])).toEqual({
      id: "e-7",
      method: false,
      answer: true,
    });
    // Escapes spell the same key; a composite or over-long id is no id.
    expect(scanned(`{"\\u0069d":"x","method":"m"}`, []).id).toBe("x");
    expect(scanned(`{"id":{"a":1},"method":"m"}`, []).id).toBeNull();
    expect(scanned(`{"method":"m","id":"${"y".repeat(400)}"}`, []).id).toBeNull();
    expect(scanned(`[{"id":1}]`, []).id).toBeNull();
  });
});
