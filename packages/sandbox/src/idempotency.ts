import { createHash } from "node:crypto";
import type { Clock } from "./clock.js";
import { invalid, Problem } from "./problem.js";

export interface StoredResponse {
  status: number;
  body: unknown;
  /** Kept so that a replayed refusal is still application/problem+json. */
  contentType?: string;
}

interface IdempotencyRecord {
  digest: string;
  response: StoredResponse | null; // null while the first request is still being processed
  expiresAtMs: number;
}

export const IDEMPOTENCY_KEY_PATTERN = /^[!-~]+$/;

/** The `Idempotency-Key` header every write needs (spec part 4), or a 422 naming the rule. */
export function requireIdempotencyKey(header: string | string[] | undefined): string {
  const field = "header Idempotency-Key";
  if (header === undefined || header === "") {
    throw invalid(
      [{ field, rule: "required", message: "is required on every write" }],
      "idempotency_key_missing",
    );
  }
  const value = Array.isArray(header) ? header.join(",") : header;
  if (value.length > 255) {
    throw invalid(
      [{ field, rule: "max length 255", message: "must be at most 255 characters" }],
      "idempotency_key_invalid",
    );
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw invalid(
      [{ field, rule: "pattern ^[!-~]+$", message: "must be printable ASCII without spaces" }],
      "idempotency_key_invalid",
    );
  }
  return value;
}

/** A stable digest of a write's content: the same logical write always gives the same digest. */
export function contentDigest(content: unknown): string {
  return createHash("sha256").update(canonicalJson(content)).digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * Replay protection per (key id, Idempotency-Key). Same key and content: the stored response
 * is replayed. Same key, other content: 409 (the spec leaves this status open). A response is
 * stored once the route ran; 5xx outcomes are not stored, so a retry runs again.
 */
export class IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();

  constructor(
    private readonly clock: Clock,
    private readonly retentionSeconds: number,
  ) {}

  /** Returns the stored response to replay, or null when the caller should run the write. */
  begin(keyId: string, idempotencyKey: string, digest: string): StoredResponse | null {
    const id = `${keyId}\u0000${idempotencyKey}`;
    const now = this.clock.now();
    const existing = this.records.get(id);
    if (existing && existing.expiresAtMs > now) {
      if (existing.digest !== digest) {
        throw new Problem(
          409,
          "This Idempotency-Key was already used for a different request; use a new key for a new write.",
          {
            reasonCode: "idempotency_key_reused",
          },
        );
      }
      if (!existing.response) {
        throw new Problem(
          409,
          "A request with this Idempotency-Key is still being processed; retry shortly.",
          {
            reasonCode: "idempotency_request_in_progress",
            headers: { "Retry-After": "1" },
          },
        );
      }
      return existing.response;
    }
    this.records.set(id, {
      digest,
      response: null,
      expiresAtMs: now + this.retentionSeconds * 1000,
    });
    return null;
  }

  complete(keyId: string, idempotencyKey: string, response: StoredResponse): void {
    const record = this.records.get(`${keyId}\u0000${idempotencyKey}`);
    if (!record) return;
    if (response.status >= 500) this.records.delete(`${keyId}\u0000${idempotencyKey}`);
    else record.response = response;
  }
}
