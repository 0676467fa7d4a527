import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * The key that encrypts a shared bearer, derived from the API secret (HKDF-SHA256) and bound to
 * the API and key id: someone who can read Redis but does not hold the secret cannot use the
 * bearer, and a bearer of one API or key never opens under another's key.
 */
export function bearerKey(secret: string, baseUrl: string, keyId: string): Buffer {
  return Buffer.from(
    hkdfSync("sha256", secret, "portfolio-mcp shared bearer v1", `${baseUrl}\n${keyId}`, 32),
  );
}

/** AES-256-GCM, a fresh 12-byte IV each time; `context` is authenticated, not stored. */
export function sealBearer(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** The plaintext, or null when the value was not sealed with this key for this context. */
export function openBearer(key: Buffer, sealed: string, context: string): string | null {
  try {
    const raw = Buffer.from(sealed, "base64url");
    if (raw.length < 29) return null;
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
