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

  /** Lines that came before the limit was known and may be over it, in order. */
  private held: Buffer[] | null = [];
  private limit: number | null = null;

  constructor(private readonly onOversized: (line: Oversized) => void) {
    super();
  }

  /** The limit in force; until the configuration is read, the largest it may set. */
  get maxBytes(): number {
    return this.limit ?? LIMIT_CEILING;
  }

  /**
   * The configured limit, known once the configuration is read (the stream starts before it,
   * so that discovery is answered at once): lines held until then are judged by it, in order.
   */
  setLimit(maxBytes: number): void {
    this.limit = maxBytes;
    const held = this.held ?? [];
    this.held = null;
    for (const line of held) {
      if (line.length > maxBytes)
        this.onOversized({
          bytes: line.length,
          id: leadingId(line.subarray(0, HEAD_BYTES).toString("utf8")),
        });
      else this.push(Buffer.concat([repaired(line), NEWLINE]));
    }
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
    // Small lines (discovery, initialize) need no limit to be judged: no limit is below the floor.
    if (this.held && (this.held.length > 0 || line.length > LIMIT_FLOOR)) {
      this.held.push(line);
      return;
    }
    this.push(Buffer.concat([repaired(line), NEWLINE]));
  }
}

/** The bounds of PORTFOLIO_MCP_MAX_BODY_BYTES (src/config.ts). */
export const LIMIT_FLOOR = 1024;
const LIMIT_CEILING = 104_857_600;

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
