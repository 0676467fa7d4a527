import { hash } from "node:crypto";

/**
 * One line of the audit trail. Every record names the record before it by the SHA-256 of its
 * line (`prev`) and carries its place in the replica's chain (`seq`): a record changed, removed
 * or moved breaks the chain where it stood (src/audit/verify.ts).
 */
export interface AuditRecord {
  seq: number;
  /** ISO 8601, UTC, milliseconds. */
  time: string;
  /** The replica whose chain this is (its host name unless PORTFOLIO_REPLICA_ID says). */
  replica: string;
  event: AuditEvent;
  /** SHA-256 (hex) of the previous record's line; a chain's first record has 64 zeros. */
  prev: string;
  /** The clients-file client id or the OAuth principal (`oauth:` and a hash), `stdio:<name>`. */
  principal?: string;
  /** The signed-in person's e-mail (PORTFOLIO_AUDIT_IDENTITY=email), else a hash of the principal. */
  identity?: string;
  delegated_user?: string | null;
  /** The 2025 session id, or "stateless". */
  session?: string;
  /** The protocol era: 2025-11-25 or 2026-07-28. */
  era?: string;
  /** tools/call, resources/read, prompts/get, completion/complete; or the write step. */
  method?: string;
  /** The tool, resource URI or prompt. */
  target?: string;
  /** Partner API operations the event caused, with their answers. */
  operations?: Array<{ id: string; status: number | null; request_id: string }>;
  /** A write's own key, reused by every retry. */
  idempotency_key?: string;
  /** The intent (cf_…) a write event is about. */
  intent?: string;
  /** What a write touches: its path parameters (operation_id, alert_id, …). */
  subject?: Record<string, string>;
  /** form, input-required, card or two-step. */
  channel?: string;
  /** ok, error, refused; drafted; confirmed, cancelled, declined, expired; delivered, failed, uncertain, recovered. */
  outcome?: string;
  /** Why, in the server's own words, when refused or failed. */
  reason?: string;
  duration_ms?: number;
  trace_id?: string;
  /** HMAC-SHA256 of the canonical arguments, under a key derived from the state secret. */
  args_digest?: string;
  /** The arguments themselves, secrets and share tokens removed (PORTFOLIO_AUDIT_ARGUMENTS=full). */
  args?: unknown;
  /** chain-start: the file it continues; chain-resumed: what was found after a crash. */
  note?: string;
}

export type AuditEvent =
  /** The first record of a file (a new chain, or a rotation continuing the previous file's). */
  | "chain-start"
  /** A start after a crash left a truncated last line: the chain continues past it, saying so. */
  | "chain-resumed"
  /** An MCP request that reads or changes data. */
  | "request"
  | "draft"
  /** confirmed, cancelled, declined, expired, refused. */
  | "decision"
  /** delivered, failed (refused by the API or by this server), uncertain, recovered. */
  | "delivery"
  | "sign-in-refused";

export const GENESIS = "0".repeat(64);

/** The SHA-256 (hex) of one record's line, as written (without its newline). */
export const hashOfLine = (line: string): string => hash("sha256", line, "hex");

/**
 * HMAC-SHA256 (RFC 2104) under one key, from one-shot hashes with the key's pads made once: the
 * same digest as createHmac, without a key object and an Hmac made for every record.
 */
export function hmacSha256(key: Buffer): (text: string) => string {
  const block = key.length > 64 ? hash("sha256", key, "buffer") : key;
  const inner = Buffer.alloc(64, 0x36);
  const outer = Buffer.alloc(64, 0x5c);
  for (let i = 0; i < block.length; i++) {
    inner[i] = (inner[i] as number) ^ (block[i] as number);
    outer[i] = (outer[i] as number) ^ (block[i] as number);
  }
  return (text) => {
    const innerDigest = hash("sha256", Buffer.concat([inner, Buffer.from(text, "utf8")]), "buffer");
    return hash("sha256", Buffer.concat([outer, innerDigest]), "hex");
  };
}
