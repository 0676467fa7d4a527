import { Transform, type TransformCallback } from "node:stream";
import { leadingId, repairResponse } from "./jsonrpc.js";

export interface Oversized {
  bytes: number;
  /** The request's id when its first bytes show it, so it can be answered with an error. */
  id: string | number | null;
}

/**
 * stdin as the SDK's stdio transport should see it: one JSON-RPC message per line, none over
 * `maxBytes`, malformed answers repaired. The SDK closes the whole session, silently, on a
 * line over its 10 MiB buffer; here an oversized line is skipped as it streams (never held in
 * memory) and reported, and the session goes on.
 */
export class StdioLines extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the oversized line being skipped, or -1 when not skipping. */
  private skipped = -1;
  private skippedHead = "";

  constructor(
    /** Set once the configuration is read (the stream starts before it). */
    public maxBytes: number,
    private readonly onOversized: (line: Oversized) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      this.append(chunk.subarray(start, end));
      if (newline === -1) break;
      this.endLine();
      start = newline + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.pendingBytes > 0 || this.skipped >= 0) this.endLine();
    done();
  }

  private append(part: Buffer): void {
    if (this.skipped >= 0) {
      this.skipped += part.length;
      return;
    }
    if (this.pendingBytes + part.length > this.maxBytes) {
      const head = Buffer.concat([...this.pending, part.subarray(0, HEAD_BYTES)]);
      this.skippedHead = head.subarray(0, HEAD_BYTES).toString("utf8");
      this.skipped = this.pendingBytes + part.length;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  private endLine(): void {
    if (this.skipped >= 0) {
      this.onOversized({ bytes: this.skipped, id: leadingId(this.skippedHead) });
      this.skipped = -1;
      this.skippedHead = "";
      return;
    }
    const line = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    this.push(Buffer.concat([repaired(line), NEWLINE]));
  }
}

const NEWLINE = Buffer.from("\n");
/** Enough of an oversized line to find its id in. */
const HEAD_BYTES = 1024;

/** The line itself unless it is a malformed answer; unparsable lines go on to the SDK as they are. */
function repaired(line: Buffer): Buffer {
  let message: unknown;
  try {
    message = JSON.parse(line.toString("utf8"));
  } catch {
    return line;
  }
  const fixed = repairResponse(message);
  return fixed === message ? line : Buffer.from(JSON.stringify(fixed));
}
