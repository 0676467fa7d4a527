import type { Agent, Dispatcher } from "undici";

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
}

export interface HttpReply {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /**
   * Set when the answer's body was larger than the transport reads: its status and headers
   * are real, its body was not read (empty here), and the connection was closed.
   */
  tooLarge?: { limitBytes: number };
}

/** The largest answer read by default (PORTFOLIO_MAX_RESPONSE_BYTES). */
export const DEFAULT_MAX_RESPONSE_BYTES = 20_971_520;

export type NetworkFailure = "aborted" | "timeout" | "connection" | "other";

/**
 * The request never produced an HTTP answer. `kind` decides whether a retry makes sense;
 * `message` says what failed and what to check, in words an operator can act on.
 */
export class NetworkError extends Error {
  override name = "NetworkError";

  constructor(
    readonly kind: NetworkFailure,
    message: string,
    readonly causeCode?: string,
  ) {
    super(message);
  }
}

const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
]);
/** Worth another try: the next attempt may well get through. */
const TRANSIENT_CODES = new Set([
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
]);
const TLS_TRUST_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** Why a request got no answer, with what to check: connection, DNS, TLS or timeout. */
export function classifyNetworkError(error: unknown, signal?: AbortSignal): NetworkError {
  const e = error as { code?: string; name?: string; message?: string; hostname?: string };
  if (signal?.aborted || e.name === "AbortError" || e.code === "UND_ERR_ABORTED") {
    return new NetworkError("aborted", "the call was cancelled", e.code);
  }
  const code = e.code ?? "";
  const kind: NetworkFailure = TIMEOUT_CODES.has(code)
    ? "timeout"
    : TRANSIENT_CODES.has(code)
      ? "connection"
      : "other";
  return new NetworkError(kind, explain(code, e), code || undefined);
}

function explain(code: string, e: { message?: string; hostname?: string }): string {
  if (TIMEOUT_CODES.has(code))
    return `no answer in time (${code}); the API may be overloaded or a firewall may drop the traffic`;
  if (code === "ECONNREFUSED")
    return "the connection was refused (ECONNREFUSED): nothing listens at that address and port; check the host and port of PORTFOLIO_API_BASE_URL and that the API is up";
  if (code === "ENOTFOUND")
    return `the host name${e.hostname ? ` ${e.hostname}` : ""} does not resolve (DNS, ENOTFOUND); check the spelling of PORTFOLIO_API_BASE_URL`;
  if (code === "EAI_AGAIN")
    return "the DNS lookup failed for now (EAI_AGAIN); check this machine's network and DNS";
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "EPROTO")
    return `the TLS handshake failed (${code}): the server does not speak HTTPS on that port; check whether PORTFOLIO_API_BASE_URL should start with http://`;
  if (TLS_TRUST_CODES.has(code))
    return `the server's TLS certificate is not trusted (${code}); give this machine its CA (NODE_EXTRA_CA_CERTS) or fix the certificate`;
  if (code === "UND_ERR_SOCKET" || code === "ECONNRESET")
    return `the server closed the connection without answering (${code}); if the port speaks HTTPS, PORTFOLIO_API_BASE_URL should start with https://`;
  if (code === "ENETUNREACH" || code === "EHOSTUNREACH")
    return `the network or host is unreachable (${code}); check routes and firewalls`;
  return `${e.message ?? "the request failed"}${code ? ` (${code})` : ""}`;
}

/**
 * The body, or null when it is larger than `limitBytes`: refused on its Content-Length before
 * a byte is read, else counted as it streams and abandoned past the limit. Either way the
 * stream is destroyed, which closes the connection: the rest is never read.
 */
async function readCapped(
  body: Dispatcher.ResponseData["body"],
  contentLength: string | undefined,
  limitBytes: number,
): Promise<Buffer | null> {
  if (Number(contentLength) > limitBytes) {
    body.destroy();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) {
      body.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

export interface Transport {
  send(req: HttpRequest): Promise<HttpReply>;
  close(): Promise<void>;
}

interface TransportOptions {
  timeoutMs: number;
  connectTimeoutMs?: number;
  /** A larger answer is not read: Content-Length is checked, then the bytes as they come. */
  maxResponseBytes?: number;
}

/**
 * undici with keep-alive and the three timeouts: connect, response headers, response body.
 * undici is loaded on the first request, not at startup: importing it is the largest single
 * cost of a cold start, and a client launching the server waits for `initialize`, not for it.
 */
export function createTransport(options: TransportOptions): Transport {
  const limitBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const undici = new LazyUndici(options);
  return {
    async send(req) {
      const { agent, request } = await undici.get();
      try {
        const res = await request(req.url, {
          method: req.method as "GET",
          headers: req.headers,
          body: req.body,
          signal: req.signal,
          dispatcher: agent,
        });
        const headers = flatHeaders(res.headers);
        const body = await readCapped(res.body, headers["content-length"], limitBytes);
        return body === null
          ? { status: res.statusCode, headers, body: Buffer.alloc(0), tooLarge: { limitBytes } }
          : { status: res.statusCode, headers, body };
      } catch (error) {
        throw classifyNetworkError(error, req.signal);
      }
    },
    close: () => undici.close(),
  };
}

/** Header names in lower case, repeated values joined. */
function flatHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined)
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

interface Undici {
  agent: Agent;
  request: typeof import("undici").request;
}

/** undici and one agent, loaded on first use; a failed load is tried again, never cached. */
class LazyUndici {
  private loaded: Promise<Undici> | null = null;

  constructor(private readonly options: TransportOptions) {}

  get(): Promise<Undici> {
    this.loaded ??= import("undici")
      .then((module) => {
        // Bundlers may hand a CommonJS package back as its default export only.
        const { Agent, request } = (
          "Agent" in module ? module : (module as { default: typeof module }).default
        ) as typeof module;
        const { timeoutMs, connectTimeoutMs } = this.options;
        return {
          agent: new Agent({
            connect: { timeout: connectTimeoutMs ?? Math.min(timeoutMs, 10_000) },
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
            keepAliveTimeout: 4_000,
            keepAliveMaxTimeout: 30_000,
            // undici 8 negotiates HTTP/2 over TLS by default; retries, timeouts and the error
            // classification above are built and tested on HTTP/1.1 (the sandbox speaks it).
            allowH2: false,
          }),
          request,
        };
      })
      .catch((error: unknown) => {
        this.loaded = null;
        throw error;
      });
    return this.loaded;
  }

  async close(): Promise<void> {
    const current = await this.loaded?.catch(() => null);
    await current?.agent.close();
  }
}
