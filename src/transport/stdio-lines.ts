import { Transform, type TransformCallback } from "node:stream";
import { INVALID_REQUEST, repairResponse } from "./jsonrpc.js";
import { TopLevelScan } from "./top-level-id.js";

export interface Oversized {
  bytes: number;
  /** The message's top-level id, wherever it came in the line; null when none can be read. */
  id: string | number | null;
  /**
   * An answer to one of our requests (a result or an error, no method): it is settled as a
   * refusal in the stream, never answered back.
   */
  answer: boolean;
}

/**
 * stdin as the SDK's stdio transport should see it: one JSON-RPC message per line, none over
 * `maxBytes`, malformed answers repaired. The SDK closes the whole session, silently, on a
 * line over its 10 MiB buffer; here an oversized line is skipped as it streams (never held in
 * memory) and reported, and the session goes on. Its top-level id is read as it streams, so it
 * can be answered by id however late the id comes.
 */
export class StdioLines extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the oversized line being skipped, or -1 when not skipping. */
  private skipped = -1;
  /** What the skipped line says of itself, read as it goes by. */
  private scan: TopLevelScan | null = null;

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
      if (line.length <= maxBytes) {
        this.push(Buffer.concat([repaired(line), NEWLINE]));
        continue;
      }
      const scan = new TopLevelScan();
      scan.feed(line);
      this.refuse(line.length, scan);
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
      this.scan?.feed(part);
      return;
    }
    if (this.pendingBytes + part.length > this.maxBytes) {
      this.scan = new TopLevelScan();
      for (const held of this.pending) this.scan.feed(held);
      this.scan.feed(part);
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
      const bytes = this.skipped;
      const scan = this.scan;
      this.skipped = -1;
      this.scan = null;
      this.refuse(bytes, scan);
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

  /** A line over the limit, by what its scan read of it: reported, and answered where it can be. */
  private refuse(bytes: number, scan: TopLevelScan | null): void {
    const facts = scan?.result() ?? { id: null, method: false, answer: false };
    const oversized = { bytes, id: facts.id, answer: facts.answer };
    // Our request waits for this answer: a refusal with its id settles it at once.
    if (oversized.answer && oversized.id !== null)
      this.push(`${JSON.stringify(refusedAnswer(oversized.id, bytes, this.maxBytes))}\n`);
    this.onOversized(oversized);
  }
}

/** The bounds of PORTFOLIO_MCP_MAX_BODY_BYTES (src/config.ts). */
export const LIMIT_FLOOR = 1024;
const LIMIT_CEILING = 104_857_600;

const NEWLINE = Buffer.from("\n");

function refusedAnswer(id: string | number, bytes: number, maxBytes: number) {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: INVALID_REQUEST,
      message: `The client's answer takes ${bytes} bytes, over this server's limit of ${maxBytes}; it was not read.`,
    },
  };
}

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
