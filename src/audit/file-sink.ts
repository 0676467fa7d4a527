import {
  closeSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { type AuditRecord, GENESIS, hashOfLine } from "./record.js";

/** Where the chain stands: the next record's place, and the hash it must name. */
export interface ChainHead {
  seq: number;
  prev: string;
}

/** What a sink found when it opened, for the record that starts or resumes its chain. */
export interface Opening {
  head: ChainHead;
  /** Bytes of a last line a crash cut short (never completed, never hashed), or 0. */
  truncatedBytes: number;
  /** Whether the file held no record yet. */
  fresh: boolean;
  /** The last record lacks its newline (a crash right before it): the next starts a line. */
  unterminated?: boolean;
}

/** A record could not be written: the disk is full, the file unwritable, the path gone. */
export class AuditWriteError extends Error {
  override name = "AuditWriteError";
}

/** How much of a file's end is read to find its last record. */
const TAIL_BYTES = 1 << 20;
/** Lines of reads waiting for their write are written at once past this many bytes. */
const FLUSH_BYTES = 64 * 1024;
/** How often a file is checked for having been moved away, between durable records. */
const MOVED_CHECK_MS = 1_000;

/**
 * An append-only JSON-lines file of one replica's chain. Decisions and deliveries are written
 * and fsynced before the write they concern goes on (with whatever lines came before them, in
 * order); the records of reads wait for the end of the event loop's turn (or 64 KiB) and go in
 * one write(2): the cost of a read's record is a copy, not a system call. When the
 * file passes `maxBytes` it is renamed aside (`<file>.<time>`) and a new one starts with a
 * record naming the last hash of the old: the chain runs on across files. A file moved away by
 * another tool (logrotate) is noticed before the next record, and a new one started the same
 * way. Nothing is buffered: what was written survives a crash of this process.
 */
export class AuditFile {
  private fd: number;
  private ino: number;
  private size: number;
  /** A crash cut the last line short: the next record starts on a line of its own. */
  private cutShort: boolean;
  /** Lines waiting for their write (reads' records), in chain order. */
  private pending: string[] = [];
  private pendingBytes = 0;
  private flushing: NodeJS.Immediate | null = null;
  private checkedAt = 0;
  /** Told when lines waiting for their write could not be written (nobody waits for them). */
  onLost: (error: AuditWriteError, lines: number) => void = () => {};

  private constructor(
    readonly path: string,
    private readonly maxBytes: number,
    opened: { fd: number; ino: number; size: number; cutShort: boolean },
  ) {
    this.fd = opened.fd;
    this.ino = opened.ino;
    this.size = opened.size;
    this.cutShort = opened.cutShort;
  }

  /** Opens (creating, 0600) and reads where its chain stands. */
  static open(path: string, maxBytes: number): { file: AuditFile; opening: Opening } {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const fd = openSync(path, "a+", 0o600);
    const stat = fstatSync(fd);
    const opening = readOpening(fd, stat.size);
    const cutShort = opening.truncatedBytes > 0 || opening.unterminated === true;
    return {
      file: new AuditFile(path, maxBytes, { fd, ino: stat.ino, size: stat.size, cutShort }),
      opening,
    };
  }

  /**
   * Whether the next line must go to a new file: this one passed its size, or was moved away
   * (rotated by another tool, removed). The caller then calls `startNewFile` and writes the
   * record that continues the chain there first.
   */
  needsNewFile(durable: boolean): boolean {
    const now = Date.now();
    // A durable record is never written to a file that is gone; a read's is checked once a second.
    if (durable || now - this.checkedAt >= MOVED_CHECK_MS) {
      this.checkedAt = now;
      if (this.movedAway()) return true;
    }
    return this.size > 0 && this.size >= this.maxBytes;
  }

  /**
   * Renames a full file aside (`<file>.<time>-<next seq>`: unique, however fast files fill), or
   * leaves a moved one, and opens a new one.
   */
  startNewFile(nextSeq: number): void {
    this.flush(); // what came before goes to the file it belongs to
    guarded(this.path, () => {
      const rotating = !this.movedAway();
      this.release();
      if (rotating) {
        const stamp = new Date().toISOString().replace(/[:.]/g, "-");
        renameSync(this.path, `${this.path}.${stamp}-${nextSeq}`);
      }
      this.fd = openSync(this.path, "a", 0o600);
      const stat = fstatSync(this.fd);
      this.ino = stat.ino;
      this.size = stat.size;
      this.cutShort = false;
    });
  }

  /**
   * Appends one line. `durable`: written and fsynced (with the lines before it) before this
   * returns, or an AuditWriteError; otherwise written at the end of this turn of the event loop.
   */
  write(line: string, durable: boolean): void {
    const text = `${this.cutShort ? "\n" : ""}${line}\n`;
    this.cutShort = false;
    this.pending.push(text);
    this.pendingBytes += text.length;
    this.size += Buffer.byteLength(text, "utf8");
    if (durable) {
      this.flush();
      guarded(this.path, () => fsyncSync(this.fd));
    } else if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    else this.flushing ??= setImmediate(() => this.flushQuietly());
  }

  close(): void {
    this.flushQuietly();
    this.release();
  }

  /** Writes the lines waiting, in one write; an AuditWriteError when they cannot be written. */
  private flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = null;
    if (this.pending.length === 0) return;
    const bytes = Buffer.from(this.pending.join(""), "utf8");
    this.pending = [];
    this.pendingBytes = 0;
    guarded(this.path, () => {
      if (this.fd < 0) throw new Error("no file open");
      let done = 0;
      while (done < bytes.length) done += writeSync(this.fd, bytes, done);
    });
  }

  /** A flush nobody waits for: its failure is told to onLost. */
  private flushQuietly(): void {
    const lines = this.pending.length;
    try {
      this.flush();
    } catch (error) {
      this.onLost(error as AuditWriteError, lines);
    }
  }

  /** Closes the descriptor once: a number closed twice could be another file's by then. */
  private release(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  /** Whether the path now names another file, or none: someone moved ours away. */
  private movedAway(): boolean {
    if (this.fd < 0) return true; // a reopening failed: try again
    try {
      return statSync(this.path).ino !== this.ino;
    } catch {
      return true;
    }
  }
}

/** Runs a file operation; any failure is an AuditWriteError naming the file and the cause. */
function guarded(path: string, work: () => void): void {
  try {
    work();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new AuditWriteError(`the audit file ${path} cannot be written (${code})`);
  }
}

/** The chain's head from a file's end: its last complete record, and any cut-short line. */
function readOpening(fd: number, size: number): Opening {
  if (size === 0) return { head: { seq: 0, prev: GENESIS }, truncatedBytes: 0, fresh: true };
  const length = Math.min(size, TAIL_BYTES);
  const tail = Buffer.alloc(length);
  readSync(fd, tail, 0, length, size - length);
  let text = tail.toString("utf8");
  // A last record written whole but for its newline is complete: the next one starts a line.
  const unterminated = text.slice(text.lastIndexOf("\n") + 1);
  if (unterminated !== "" && parses(unterminated)) text = `${text}\n`;
  const cut = text.endsWith("\n") ? 0 : text.length - text.lastIndexOf("\n") - 1;
  const complete = text.slice(0, text.length - cut).replace(/\n$/, "");
  const lastLine = complete.slice(complete.lastIndexOf("\n") + 1);
  const truncatedBytes = Buffer.byteLength(text.slice(text.length - cut), "utf8");
  if (lastLine === "")
    return { head: { seq: 0, prev: GENESIS }, truncatedBytes, fresh: truncatedBytes === size };
  let seq = 0;
  try {
    seq = (JSON.parse(lastLine) as AuditRecord).seq ?? 0;
  } catch {
    // An unreadable last record: the chain goes on from its hash, and verify will say where.
  }
  return {
    head: { seq: seq + 1, prev: hashOfLine(lastLine) },
    truncatedBytes,
    fresh: false,
    unterminated: unterminated !== "" && truncatedBytes === 0,
  };
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
