import { createHmac } from "node:crypto";
import { canonicalJson } from "../canonical.js";
import { sameMac } from "../state/keys.js";
import type { Intent } from "./intent.js";

/**
 * The MAC every stored intent carries (HMAC-SHA256 under a key derived from the state secret):
 * whoever can write the state directory or the fleet's Redis, but does not hold the secret,
 * cannot make a record this server will deliver, nor change what one sends, to whom, as whom,
 * or what was decided about it. It covers the whole record but its revision (the store's own
 * counter) and itself.
 */
export class IntentMac {
  constructor(private readonly key: Buffer) {}

  /** The intent with its MAC, as a store writes it. */
  signed(intent: Intent): Intent {
    return { ...intent, mac: this.of(intent) };
  }

  /** Whether a stored intent is exactly as a holder of the key wrote it. */
  verifies(intent: Intent): boolean {
    return typeof intent.mac === "string" && sameMac(intent.mac, this.of(intent));
  }

  private of(intent: Intent): string {
    const { mac: _mac, revision: _revision, ...covered } = intent;
    return createHmac("sha256", this.key).update(canonicalJson(covered)).digest("hex");
  }
}
