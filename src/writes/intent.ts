import { createHash } from "node:crypto";
import type { HttpMethod } from "../api/catalogue.js";
import type { DelegatedUser } from "../config.js";

/**
 * pending: drafted, waiting for the human. sending: confirmed, on the wire. succeeded / failed:
 * the API's answer is recorded. uncertain: confirmed but the outcome is unknown (network error,
 * timeout, 5xx, 429); it is sent again with the same key. cancelled / expired: never sent.
 */
export type IntentState =
  | "pending"
  | "sending"
  | "succeeded"
  | "failed"
  | "uncertain"
  | "cancelled"
  | "expired";

/** What the human sees before saying yes: faithful to the request, short. */
export interface Preview {
  action: string;
  /** What the write touches, by name when it has one (an operation's name, a view's name). */
  target: string;
  /** Whom the API will record as the author: the delegated user on /users/me*, else the key. */
  recorded_as: string;
  fields: Record<string, unknown>;
  billable: boolean;
  /** Said before the question: a deletion, an irreversible request, a bulk change. */
  warnings?: string[];
}

/**
 * Who drafted a write. `client` is the identity that may confirm it: the HTTP client's name in
 * the clients file, or the stdio client's name; a restarted stdio server keeps it, a new
 * session of the same client keeps it, another client never has it.
 */
export interface Caller {
  sessionId: string;
  client: string;
}

/** One logical write: the exact request, who asked, its key, and what became of it. */
export interface Intent {
  /** The journal's key: `cf_` and random characters. */
  id: string;
  /**
   * What confirm_write takes: the write spelled out, then the id in brackets, so that a client
   * asking "allow confirm_write?" shows the human the write itself (only this exact string).
   */
  confirmationId: string;
  operation: string;
  /** The route it was drafted against (absent in intents drafted before routes were kept). */
  route?: {
    method: HttpMethod;
    path: string;
    capability: string | null;
    bodyType: "json" | "multipart";
  };
  path: Record<string, unknown>;
  query?: Record<string, unknown>;
  body: unknown;
  delegatedUser: DelegatedUser | null;
  caller: Caller;
  /** Where it goes: recovery never replays a write against another API or key. */
  upstream: { baseUrl: string; keyId: string };
  idempotencyKey: string;
  digest: string;
  preview: Preview;
  state: IntentState;
  createdAt: string;
  expiresAt: string;
  confirmedAt: string | null;
  updatedAt: string;
  attempts: number;
  /** How many times the store wrote it: what a compare-and-set compares (absent: never stored). */
  revision?: number;
  result: unknown;
  error: { code: string; message: string; status?: number; reasonCode?: string } | null;
}

/** A digest of everything that defines the write, so a stored intent can be checked unchanged. */
export function intentDigest(
  intent: Pick<
    Intent,
    | "operation"
    | "route"
    | "path"
    | "query"
    | "body"
    | "delegatedUser"
    | "caller"
    | "upstream"
    | "idempotencyKey"
  >,
): string {
  return createHash("sha256")
    .update(
      canonical({
        operation: intent.operation,
        route: intent.route,
        path: intent.path,
        query: intent.query,
        body: intent.body,
        delegatedUser: intent.delegatedUser,
        caller: intent.caller,
        upstream: intent.upstream,
        idempotencyKey: intent.idempotencyKey,
      }),
    )
    .digest("hex");
}

/** sha256 of a value's canonical JSON (keys sorted, undefined dropped). */
export function canonicalDigest(value: unknown): string {
  return createHash("sha256").update(canonical(value)).digest("hex");
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
