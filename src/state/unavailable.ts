// What the shared state's failures look like, apart from the Redis client: modules that only
// recognise a failure do not load node-redis (about 500 KiB) into every start.

/**
 * Longest a call waits for Redis. A server that went away is noticed at once (the client does
 * not queue commands while it reconnects); one that stopped answering on an open connection is
 * noticed after this long, so that no tool call hangs on it.
 */
export const REDIS_ANSWER_TIMEOUT_MS = 2_000;

/**
 * Redis did not answer (down, unreachable, too slow) or refused the command (out of memory,
 * persistence failing, a read-only replica). The message names the server by host and port only.
 */
export class StoreUnavailable extends Error {
  override name = "StoreUnavailable";
  constructor(
    /** host:port of the Redis server (never the URL: it may hold a password). */
    readonly where: string,
    /** What Redis answered, when it refused rather than stayed silent. */
    readonly refusal: string | null = null,
    /**
     * Whether the command may have run all the same: it was sent, and no answer came in time
     * (or the connection broke after sending). False when Redis refused it, or when it never
     * left (the client was offline or closed).
     */
    readonly outcomeUnknown = false,
  ) {
    super(
      `The shared state store (Redis at ${where}) ${refusal ? `refused the command (${refusal})` : "does not answer"}`,
    );
  }
}
