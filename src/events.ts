/**
 * What the server does that a compliance review or an operator asks about, told once, as it
 * happens, to every sink that listens: the audit trail (src/audit/) and telemetry. One emitter,
 * several sinks; nothing keeps a second book beside the write journal.
 */

/** One upstream attempt a request caused (src/http/attempts.ts). */
export interface UpstreamCall {
  operation: string;
  /** null: no answer (network error, timeout). */
  status: number | null;
  /** The X-Request-ID sent, which the API echoes in its logs and errors. */
  requestId: string;
  ms: number;
  attempt: number;
}

/** Who a request or a write is for, as far as the server knows. */
export interface Actor {
  /** The clients-file client (`http:<name>`), the OAuth principal, or `stdio:<client name>`. */
  principal: string;
  /** The signed-in person's e-mail, when the sign-in says it (OAuth); null otherwise. */
  email: string | null;
  /** The user the API is told each call acts for; null when none. */
  delegatedUser: string | null;
  /** The 2025 session id; null for a stateless request or a 2026 client. */
  session: string | null;
  /** The protocol era the request came in: 2025-11-25 or 2026-07-28. */
  era: string | null;
}

/** The requests that read or change data: those the audit trail records. */
export const DATA_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "resources/read",
  "prompts/get",
  "completion/complete",
]);

/**
 * An MCP request, of any method (its duration is a metric); those of DATA_METHODS read or change
 * data (tools/call, resources/read, prompts/get, completion).
 */
export interface RequestEvent extends Actor {
  method: string;
  /** The tool, the resource URI, the prompt, the completion's reference. */
  target: string | null;
  arguments: unknown;
  /** ok; error (a tool result with isError, or a protocol error); input_required (asked). */
  outcome: "ok" | "error" | "input_required";
  /** tool_error for an isError result, else the protocol error's name. */
  errorType: string | null;
  durationMs: number;
  calls: UpstreamCall[];
  /** The request's trace: its server span's, else the client's `_meta.traceparent` or header. */
  traceId: string | null;
}

/** A step of a write: drafted, decided (by a person, or refused), delivered (or not). */
export interface WriteEvent extends Actor {
  step: "draft" | "decision" | "delivery";
  intent: string;
  /** The API operation it writes, and what it touches (its path parameters). */
  operation: string;
  subject: Record<string, string>;
  idempotencyKey: string;
  channel: string;
  /**
   * draft: drafted, refused. decision: confirmed, cancelled, declined, expired, refused.
   * delivery: delivered, refused (by the API or by this server), uncertain, recovered.
   */
  outcome: string;
  reason: string | null;
  /** The draft's trace, wherever the step happens (it travels with the intent). */
  traceId: string | null;
}

export interface SignInRefusal {
  /** token, claim, unverified, not_listed, scope, …: why, in the authenticator's words. */
  reason: string;
  status: number;
  /** The principal, when the token named one (a hash of issuer and subject); else null. */
  principal: string | null;
}

/**
 * A sink. `write` for a decision to confirm throws when it cannot keep a record of it: the
 * write is then not sent (fail closed). Every other method reports its own failures.
 */
export interface Observer {
  request?(event: RequestEvent): void;
  write?(event: WriteEvent): void;
  signInRefused?(event: SignInRefusal): void;
}

/** Every sink at once; a sink that throws on `write` stops the write, after the others saw it. */
export class Observers implements Observer {
  constructor(private readonly sinks: readonly Observer[]) {}

  request(event: RequestEvent): void {
    for (const sink of this.sinks) sink.request?.(event);
  }

  write(event: WriteEvent): void {
    let failure: unknown = null;
    for (const sink of this.sinks) {
      try {
        sink.write?.(event);
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure) throw failure;
  }

  signInRefused(event: SignInRefusal): void {
    for (const sink of this.sinks) sink.signInRefused?.(event);
  }
}
