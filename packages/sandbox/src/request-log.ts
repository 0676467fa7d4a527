/** One request, logged once answered (or dropped): `seq` orders answers, `at` arrivals. */
export interface RequestLogEntry {
  seq: number;
  /** When the request arrived (sandbox clock). */
  at: string;
  method: string;
  /** The raw path as received, without the query string. */
  path: string;
  query: Record<string, string | string[]>;
  routeId: string | null;
  /** Header names in lower case, as node receives them. */
  headers: Record<string, string>;
  /** Parsed JSON when the body was JSON, the raw text otherwise, null when empty. */
  body: unknown;
  /** A multipart body's parts, each as its header lines (the bytes are not kept). */
  parts?: string[][];
  remoteAddress: string;
  keyId: string | null;
  /** null when the connection was dropped without an answer. */
  status: number | null;
  durationMs: number;
}

/** Every request the sandbox received, newest last, bounded so long runs do not grow forever. */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private seq = 0;

  constructor(private readonly limit: number) {}

  add(entry: Omit<RequestLogEntry, "seq">): RequestLogEntry {
    const full = { ...entry, seq: ++this.seq };
    this.entries.push(full);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    return full;
  }

  list(filter: { routeId?: string; method?: string; since?: number } = {}): RequestLogEntry[] {
    return this.entries.filter(
      (e) =>
        (filter.routeId === undefined || e.routeId === filter.routeId) &&
        (filter.method === undefined || e.method === filter.method.toUpperCase()) &&
        (filter.since === undefined || e.seq > filter.since),
    );
  }

  /** The sequence number of the newest entry: pass it as `since` to see only what follows. */
  mark(): number {
    return this.seq;
  }

  clear(): void {
    this.entries = [];
  }
}
