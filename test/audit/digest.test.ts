import { createHash, createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashOfLine, hmacSha256 } from "../../src/audit/record.js";

/** The chain's digests are made with one-shot hashes: the same as node:crypto's objects make. */
describe("the audit trail's digests", () => {
  const texts = [
    "",
    '{"limit":50,"status":"active"}',
    "Cœur des Chartreux – Montreuil 🙂",
    "x".repeat(5000),
  ];
  it.each([1, 16, 32, 64, 65, 100])(
    "HMAC-SHA256 under a %i-byte key equals createHmac's",
    (size) => {
      const key = Buffer.from(Array.from({ length: size }, (_, i) => (i * 37 + 11) % 256));
      const digest = hmacSha256(key);
      for (const text of texts)
        expect(digest(text)).toBe(createHmac("sha256", key).update(text, "utf8").digest("hex"));
    },
  );

  it("hashes a line as createHash does", () => {
    for (const text of texts)
      expect(hashOfLine(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
  });
});
