import { createHash } from "node:crypto";
import type { HttpMethod } from "../api/catalogue.js";
import { canonicalJson } from "../canonical.js";
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
 * How the person is asked, recorded with the draft: only that channel's settling call can
 * decide it (confirm or cancel). `form`: the client's form inside the call (2025 sessions);
 * `input-required`: the 2026 round trip with a sealed state; `card`: the MCP Apps card's
 * buttons; `two-step`: confirm_write after the assistant asked in the chat.
 */
export type Channel = "form" | "input-required" | "card" | "two-step";

/**
 * What a caller was granted when it drafted, kept with the intent: a delivery re-checks it,
 * with this server's own rules, on whichever replica delivers.
 */
export interface Grants {
  readOnly: boolean;
  /** Tool names, operation ids and families (the clients or users file); null for all. */
  tools: readonly string[] | null;
}

/**
 * Who drafted a write. `client` is the identity that may confirm it: the HTTP client's name in
 * the clients file, or the stdio client's name; a restarted stdio server keeps it, a new
 * session of the same client keeps it, another client never has it.
 */
export interface Caller {
  sessionId: string;
  client: string;
  /** What the caller may use now; absent for work no caller started (recovery). */
  grants?: Grants;
  /** The signed-in person's e-mail, when the sign-in names one (the audit trail may keep it). */
  email?: string | null;
}

/** One logical write: the exact request, who asked, its key, and what became of it. */
export interface Intent {
  /** The journal's key: `cf_` and random characters. */
  id: string;
  /**
   * What confirm_write takes: the operation, its target and a digest of the body, then the id
   * in brackets. It quotes no upstream text, which could be long or crafted.
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
  /** Dropped (null) once a draft is cancelled or expires: only its digest stays, for the audit. */
  body: unknown;
  /** sha256 of the body's canonical JSON: names the content in the id and after the body is gone. */
  bodyDigest: string;
  delegatedUser: DelegatedUser | null;
  caller: Caller;
  channel: Channel;
  /** Where it goes: recovery never replays a write against another API or key. */
  upstream: { baseUrl: string; keyId: string };
  idempotencyKey: string;
  preview: Preview;
  state: IntentState;
  createdAt: string;
  expiresAt: string;
  /** When the person's yes was recorded (the decision's time); null while it waits. */
  confirmedAt: string | null;
  updatedAt: string;
  attempts: number;
  /** How many times the store wrote it: what a compare-and-set compares (absent: never stored). */
  revision?: number;
  result: unknown;
  error: { code: string; message: string; status?: number; reasonCode?: string } | null;
  /**
   * The W3C traceparent of the request that drafted it (tracing on): the delivery continues that
   * trace on whichever replica sends it, so the draft and the send show as one trace.
   */
  trace?: string;
  /**
   * HMAC-SHA256 of everything above but the revision, under a key derived from the state
   * secret: set by the store on every write, checked on every read (src/writes/intent-mac.ts).
   */
  mac?: string;
}

/** sha256 of a value's canonical JSON (keys sorted, undefined dropped). */
export function canonicalDigest(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}
