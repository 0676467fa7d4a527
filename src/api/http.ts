import type { Agent } from "undici";

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface HttpReply {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export type NetworkFailure = "aborted" | "timeout" | "connection" | "other";

/** The request never produced an HTTP answer. `kind` decides whether a retry makes sense. */
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
const CONNECTION_CODES = new Set([
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
]);

export function classifyNetworkError(error: unknown, signal?: AbortSignal): NetworkError {
  const e = error as { code?: string; name?: string; message?: string };
  if (signal?.aborted || e.name === "AbortError" || e.code === "UND_ERR_ABORTED") {
    return new NetworkError("aborted", "the call was cancelled", e.code);
  }
  const code = e.code ?? "";
  if (TIMEOUT_CODES.has(code))
    return new NetworkError("timeout", `no answer in time (${code})`, code);
  if (CONNECTION_CODES.has(code))
    return new NetworkError("connection", `the connection failed (${code})`, code);
  return new NetworkError("other", e.message ?? String(error), code || undefined);
}

export interface Transport {
  send(req: HttpRequest): Promise<HttpReply>;
  close(): Promise<void>;
}

/**
 * undici with keep-alive and the three timeouts: connect, response headers, response body.
 * undici is loaded on the first request, not at startup: importing it is the largest single
 * cost of a cold start, and a client launching the server waits for `initialize`, not for it.
 */
export function createTransport(options: {
  timeoutMs: number;
  connectTimeoutMs?: number;
}): Transport {
  let loaded: Promise<{ agent: Agent; request: typeof import("undici").request }> | null = null;
  const load = () => {
    loaded ??= import("undici")
      .then((module) => {
        // Bundlers may hand a CommonJS package back as its default export only.
        const { Agent, request } = (
          "Agent" in module ? module : (module as { default: typeof module }).default
        ) as typeof module;
        return {
          agent: new Agent({
            connect: { timeout: options.connectTimeoutMs ?? Math.min(options.timeoutMs, 10_000) },
            headersTimeout: options.timeoutMs,
            bodyTimeout: options.timeoutMs,
            keepAliveTimeout: 4_000,
            keepAliveMaxTimeout: 30_000,
          }),
          request,
        };
      })
      .catch((error: unknown) => {
        loaded = null; // a failed load is tried again on the next request, never cached
        throw error;
      });
    return loaded;
  };
  return {
    async send(req) {
      const { agent, request } = await load();
      try {
        const res = await request(req.url, {
          method: req.method as "GET",
          headers: req.headers,
          body: req.body,
          signal: req.signal,
          dispatcher: agent,
        });
        const body = Buffer.from(await res.body.arrayBuffer());
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined)
            headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
        }
        return { status: res.statusCode, headers, body };
      } catch (error) {
        throw classifyNetworkError(error, req.signal);
      }
    },
    close: async () => {
      const current = await loaded?.catch(() => null);
      await current?.agent.close();
    },
  };
}
