import { createHash } from "node:crypto";
import { canonicalJson } from "../canonical.js";
import type { Logger } from "../log.js";
import { AuditFile, AuditWriteError, type ChainHead } from "./file-sink.js";
import { type AuditRecord, GENESIS, hashOfLine, hmacSha256 } from "./record.js";

export { AuditWriteError };

/** What the audit trail records and where (PORTFOLIO_AUDIT_*). */
export interface AuditSettings {
  /** A JSON-lines file, `-` for stderr beside the logs, or null: off. */
  file: string | null;
  /** `email`: the signed-in person's e-mail; `hash` (default): a hash of the principal. */
  identity: "hash" | "email";
  /** `digest` (default): an HMAC of the arguments; `full`: the arguments, secrets removed. */
  arguments: "digest" | "full";
  /** A file past this size is renamed aside and a new one continues the chain. */
  maxBytes: number;
}

/** What the trail's owner fills in; the trail adds its place in the chain. */
export type AuditEntry = Omit<
  AuditRecord,
  "seq" | "time" | "replica" | "prev" | "args_digest" | "args" | "identity"
> & {
  /** The request's arguments: digested (or kept, secrets removed) here, never stored raw. */
  arguments?: unknown;
  /** The signed-in person's e-mail, when known (kept only with PORTFOLIO_AUDIT_IDENTITY=email). */
  email?: string | null;
};

export interface AuditTrailOptions {
  settings: AuditSettings;
  replica: string;
  /** The key of the arguments' HMAC, derived from the state secret. */
  key: Buffer;
  logger: Logger;
  /** Removes secrets and share tokens from arguments kept whole (as the logs do). */
  redact: (value: unknown) => unknown;
  /** Told of every record written, and of every one that could not be. */
  onRecord?: (event: AuditRecord["event"], written: boolean) => void;
  clock?: () => number;
}

/**
 * The tamper-evident record of who read and changed what (README, "Audit trail"). Each record
 * names the one before by its hash; `append` throws AuditWriteError when it cannot write, and
 * the caller decides: a write is then not sent (fail closed), a read goes on with a warning.
 */
export class AuditTrail {
  private head: ChainHead;
  private readonly clock: () => number;
  /** Principals' hashes, made once each. */
  private readonly identities = new Map<string, string>();
  /** The arguments' HMAC under the trail's key. */
  private readonly digest: (text: string) => string;

  private constructor(
    private readonly options: AuditTrailOptions,
    private readonly file: AuditFile | null,
    head: ChainHead,
  ) {
    this.head = head;
    this.clock = options.clock ?? Date.now;
    this.digest = hmacSha256(options.key);
  }

  /**
   * Opens the sink and starts (or resumes) this replica's chain: a new file starts with a
   * chain-start record; a file whose last line a crash cut short resumes with a record that
   * says so, naming the last complete record; either way, never a silent break.
   */
  static open(options: AuditTrailOptions): AuditTrail {
    const { file: path, maxBytes } = options.settings;
    if (path === null) throw new Error("the audit trail is off");
    if (path === "-") {
      const trail = new AuditTrail(options, null, { seq: 0, prev: GENESIS });
      trail.append({ event: "chain-start", note: "stderr" }, false);
      return trail;
    }
    const { file, opening } = AuditFile.open(path, maxBytes);
    // Reads' records are written at the end of the turn: a failure then has nobody to tell but
    // the log and the failure count (a decision's is thrown to the gate, which sends nothing).
    file.onLost = (error, lines) => {
      options.logger.warn(
        { err: error.message, lines },
        "an audit record could not be written; the call went on",
      );
      for (let n = 0; n < lines; n++) options.onRecord?.("request", false);
    };
    const trail = new AuditTrail(options, file, opening.head);
    if (opening.truncatedBytes > 0)
      trail.append(
        {
          event: "chain-resumed",
          note: `the last line of ${path} was cut short (${opening.truncatedBytes} bytes, a crash while writing it); the chain continues from the last complete record`,
        },
        true,
      );
    else if (opening.fresh) trail.append({ event: "chain-start", note: path }, true);
    return trail;
  }

  /** Writes one record (fsynced when `durable`); throws AuditWriteError when it cannot. */
  append(entry: AuditEntry, durable: boolean): AuditRecord {
    const { arguments: args, email, ...rest } = entry;
    const fields = {
      ...rest,
      ...this.identityOf(rest.principal, email),
      ...(args === undefined ? {} : this.argumentsOf(args)),
    };
    try {
      if (this.file?.needsNewFile(durable)) {
        // A new file: its first record names the last one written, and the chain goes on.
        const continued = this.file.path;
        this.file.startNewFile(this.head.seq);
        this.write({ event: "chain-start", note: `continues the chain of ${continued}` }, true);
      }
      return this.write(fields, durable);
    } catch (error) {
      this.options.onRecord?.(fields.event, false);
      throw error;
    }
  }

  close(): void {
    this.file?.close();
  }

  /** The record in its place in the chain, written; the head moves past it. */
  private write(fields: Omit<AuditRecord, "seq" | "time" | "replica" | "prev">, durable: boolean) {
    const record: AuditRecord = {
      seq: this.head.seq,
      time: new Date(this.clock()).toISOString(),
      replica: this.options.replica,
      prev: this.head.prev,
      ...fields,
    };
    const line = JSON.stringify(record);
    if (this.file) this.file.write(line, durable);
    else process.stderr.write(`${line}\n`);
    this.head = { seq: record.seq + 1, prev: hashOfLine(line) };
    this.options.onRecord?.(record.event, true);
    return record;
  }

  private identityOf(principal: string | undefined, email: string | null | undefined) {
    if (this.options.settings.identity === "email" && email) return { identity: email };
    if (!principal) return {};
    let identity = this.identities.get(principal);
    if (!identity) {
      identity = createHash("sha256").update(principal).digest("hex").slice(0, 24);
      if (this.identities.size >= 10_000) this.identities.clear(); // a bound, not an LRU: cheap
      this.identities.set(principal, identity);
    }
    return { identity };
  }

  private argumentsOf(args: unknown) {
    const args_digest = this.digest(canonicalJson(args));
    return this.options.settings.arguments === "full"
      ? { args_digest, args: this.options.redact(args) }
      : { args_digest };
  }
}
