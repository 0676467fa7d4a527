import { hkdfSync } from "node:crypto";
import * as aead from "../aead.js";

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

/** The bearer sealed (AES-256-GCM); `context` is authenticated, not stored. */
export const sealBearer = (key: Buffer, plaintext: string, context: string): string =>
  aead.seal(key, plaintext, Buffer.from(context));

/** The plaintext, or null when the value was not sealed with this key for this context. */
export const openBearer = (key: Buffer, sealed: string, context: string): string | null =>
  aead.open(key, sealed, Buffer.from(context));
