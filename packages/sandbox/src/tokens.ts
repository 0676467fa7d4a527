import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { assertAddressAllowed } from "./access.js";
import type { Clock } from "./clock.js";
import { CONTRACT_TABLE } from "./contract/table.js";
import type { SandboxKey } from "./keys.js";
import { component, dateTime } from "./models/common.js";
import { Problem } from "./problem.js";
import type { OperationMeta } from "./routing.js";
import { parseOrRefuse } from "./validation.js";

export type ExpiresAtFormat = "iso" | "unix" | "unix-ms";

export interface TokenSettings {
  prefix: string;
  clockWindowSeconds: number;
  tokenTtlSeconds: number;
  expiresAtFormat: ExpiresAtFormat;
  environment: string;
}

interface Bearer {
  keyId: string;
  expiresAtMs: number;
}

/** Body of POST /auth/token, with the limits of spec part 5. */
const exchangeBody = z.strictObject({
  key_id: z.string().regex(/^[a-z0-9]{4,24}$/, "must be 4 to 24 lowercase letters or digits"),
  timestamp: z.int().min(0),
  nonce: z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, "must be 16 to 128 of A-Z a-z 0-9 _ -"),
  signature: z.string().regex(/^[0-9a-fA-F]{64}$/, "must be exactly 64 hexadecimal characters"),
});

const exchangeResponse = component(
  "TokenExchangeResponse",
  z.object({
    access_token: z.string(),
    token_type: z.literal("Bearer"),
    expires_in: z.int().min(1),
    // The spec leaves the format open: an ISO date-time by default, Unix time by option.
    expires_at: z.union([dateTime, z.int()]),
    environment: z.string(),
  }),
);

/** The token exchange as the export describes it: served apart, without a bearer. */
export const EXCHANGE_OPERATION: OperationMeta = {
  ...(CONTRACT_TABLE.find((op) => op.kind === "exchange") as OperationMeta),
  summary: "Exchange a signed message for a bearer token",
  description:
    "HMAC-SHA256, hex, of four lines joined by \\n without a trailing one: the token prefix, key_id, timestamp, nonce (spec part 5). Needs no bearer.",
  body: exchangeBody,
  response: { status: 200, schema: exchangeResponse },
  refusals: {
    403: ["ip_not_allowed"],
  },
};

const unauthorized = (detail: string, reasonCode: string) =>
  new Problem(401, detail, {
    reasonCode,
    headers: { "WWW-Authenticate": `Bearer realm="partner-api", error="invalid_token"` },
  });

/**
 * The signed exchange (spec part 5) and the bearers it issues. A nonce is accepted once per
 * key and a signed payload never twice; both are remembered for as long as their timestamp
 * could still fall inside the clock window.
 */
export class TokenService {
  private readonly bearers = new Map<string, Bearer>();
  private readonly usedNonces = new Map<string, number>();
  private readonly usedSignatures = new Map<string, number>();
  exchanges = 0;

  constructor(
    private readonly keys: Map<string, SandboxKey>,
    private readonly clock: Clock,
    private readonly settings: TokenSettings,
  ) {}

  exchange(rawBody: unknown, address: string): Record<string, unknown> {
    const body = parseOrRefuse(exchangeBody, rawBody);
    const key = this.keys.get(body.key_id);
    const expected = key ? sign(key.secret, this.settings.prefix, body) : "";
    if (!key || !safeEqualHex(expected, body.signature.toLowerCase())) {
      throw unauthorized("The key id or the signature is not valid.", "invalid_signature");
    }
    assertAddressAllowed(key, address, "auth_token");
    const now = this.clock.now();
    const skewSeconds = body.timestamp - Math.floor(now / 1000);
    if (Math.abs(skewSeconds) > this.settings.clockWindowSeconds) {
      throw unauthorized(
        `The timestamp is ${Math.abs(skewSeconds)} s ${skewSeconds > 0 ? "ahead of" : "behind"} the server clock; the window is ${this.settings.clockWindowSeconds} s. Compare with the Date header.`,
        "timestamp_out_of_window",
      );
    }
    this.forgetOldReplays(now);
    const signatureId = `${key.keyId}:${body.signature.toLowerCase()}`;
    if (this.usedSignatures.has(signatureId)) {
      throw unauthorized("This signed payload was already exchanged.", "signature_replayed");
    }
    const nonceId = `${key.keyId}:${body.nonce}`;
    if (this.usedNonces.has(nonceId)) {
      throw unauthorized("This nonce was already used; send a fresh one.", "nonce_reused");
    }
    const rememberUntil = now + this.settings.clockWindowSeconds * 2000;
    this.usedSignatures.set(signatureId, rememberUntil);
    this.usedNonces.set(nonceId, rememberUntil);

    const accessToken = `sbx_${randomBytes(24).toString("base64url")}`;
    const ttlSeconds = key.tokenTtlSeconds ?? this.settings.tokenTtlSeconds;
    const expiresAtMs = now + ttlSeconds * 1000;
    this.bearers.set(accessToken, { keyId: key.keyId, expiresAtMs });
    this.exchanges++;
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ttlSeconds,
      expires_at: formatExpiry(expiresAtMs, this.settings.expiresAtFormat),
      environment: this.settings.environment,
    };
  }

  /** The key behind an `Authorization: Bearer` header, or a 401. */
  authenticate(header: string | undefined): SandboxKey {
    const match = /^Bearer ([!-~]+)$/i.exec(header ?? "");
    if (!match?.[1]) {
      throw unauthorized(
        "A bearer token is required: Authorization: Bearer <token>.",
        "missing_token",
      );
    }
    const bearer = this.bearers.get(match[1]);
    if (!bearer) throw unauthorized("The bearer token is not valid.", "invalid_token");
    if (bearer.expiresAtMs <= this.clock.now()) {
      this.bearers.delete(match[1]);
      throw unauthorized("The bearer token has expired; exchange a new one.", "token_expired");
    }
    const key = this.keys.get(bearer.keyId);
    if (!key) throw unauthorized("The key behind this bearer was revoked.", "key_revoked");
    return key;
  }

  expireAll(): number {
    const count = this.bearers.size;
    this.bearers.clear();
    return count;
  }

  private forgetOldReplays(now: number): void {
    for (const store of [this.usedNonces, this.usedSignatures]) {
      for (const [id, until] of store) if (until <= now) store.delete(id);
    }
  }
}

/** The signed message of spec part 5: four lines, no trailing line feed. */
export function sign(
  secret: string,
  prefix: string,
  fields: { key_id: string; timestamp: number; nonce: string },
): string {
  const message = [prefix, fields.key_id, String(fields.timestamp), fields.nonce].join("\n");
  return createHmac("sha256", secret).update(message).digest("hex");
}

function safeEqualHex(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

function formatExpiry(ms: number, format: ExpiresAtFormat): string | number {
  if (format === "unix") return Math.floor(ms / 1000);
  if (format === "unix-ms") return ms;
  return new Date(ms).toISOString();
}
