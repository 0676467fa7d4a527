import { createHmac, randomBytes } from "node:crypto";

/** The signed message of spec part 5: four lines joined by \n, no trailing line feed. */
export function exchangeMessage(
  prefix: string,
  keyId: string,
  timestamp: number,
  nonce: string,
): string {
  return `${prefix}\n${keyId}\n${timestamp}\n${nonce}`;
}

/** Hex HMAC-SHA256 of the message with the API secret: the only use the secret has. */
export function signExchange(secret: string, message: string): string {
  return createHmac("sha256", secret).update(message).digest("hex");
}

/** 32 characters of [A-Za-z0-9_-] from 24 random bytes: inside the spec's 16-128. */
export function newNonce(): string {
  return randomBytes(24).toString("base64url");
}
