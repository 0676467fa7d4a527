import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * AES-256-GCM as this server uses it everywhere it seals something (a request state, a shared
 * bearer): a fresh 12-byte IV, then the ciphertext, then the 16-byte tag, in base64url; `aad`
 * is authenticated, not stored.
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function seal(key: Buffer, plaintext: string, aad: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

/**
 * The plaintext; null when it is truncated, altered, sealed with another key or `aad`, or not
 * spelled exactly as `seal` spells it.
 */
export function open(key: Buffer, sealed: string, aad: Buffer): string | null {
  const raw = canonicalBase64url(sealed);
  if (!raw || raw.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(aad);
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  } catch {
    return null;
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The bytes of a base64url text that has exactly one spelling: the URL alphabet only, no
 * padding, no unused bits set. Node's decoder is lenient (it skips unknown characters, takes
 * the standard alphabet and padding, ignores a last lone character), so many strings would
 * otherwise open as one token; encoding the bytes again must give the text back.
 */
export function canonicalBase64url(text: string): Buffer | null {
  if (!BASE64URL.test(text)) return null;
  const raw = Buffer.from(text, "base64url");
  return raw.toString("base64url") === text ? raw : null;
}
