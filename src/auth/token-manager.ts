import { cancelled, EXCHANGE_OPERATION } from "../http/attempts.js";
import { ApiError } from "../http/errors.js";
import { asPrincipal, SIGN_IN_PRINCIPAL } from "../http/principal.js";
import { traced } from "../telemetry/tracing.js";
import { TokenExchange, type TokenExchangeOptions } from "./exchange.js";
import type { Bearer, SharedBearerStore } from "./shared-bearer.js";

/** Never hand out a bearer this close to its end: it could expire on the wire. */
const EXPIRY_GUARD_MS = 1_000;

export interface TokenManagerOptions extends TokenExchangeOptions {
  /** The fleet's bearer and renewal lock (Redis): one exchange for every replica. */
  shared?: SharedBearerStore;
}

/** How often a replica looks for the bearer another one is renewing. */
const SHARED_POLL_MS = 25;
/** How long it waits for it before exchanging on its own (the holder may be stuck). */
const SHARED_WAIT_MS = 20_000;

/**
 * The one component that holds a bearer (spec part 5). `get()` returns a valid one: cached,
 * renewed shortly before it expires by a single exchange whatever the number of callers, and
 * exchanged again with a fresh nonce after a 401. The secret signs and goes nowhere else.
 */
export class TokenManager {
  private current: Bearer | null = null;
  private inflight: Promise<Bearer> | null = null;
  /** The last bearer the API refused: never taken back from the shared store. */
  private refused: string | null = null;
  private readonly exchange: TokenExchange;

  constructor(private readonly options: TokenManagerOptions) {
    this.exchange = new TokenExchange(options);
  }

  /** Signed exchanges sent (each with its own nonce). */
  get exchanges(): number {
    return this.exchange.exchanges;
  }

  /** A bearer valid for the next call. */
  async get(signal?: AbortSignal): Promise<string> {
    const now = this.options.clock();
    const current = this.current;
    if (current && now < current.expiresAtMs - EXPIRY_GUARD_MS) {
      // Due for renewal but still good: renew in the background, keep serving this one.
      if (now >= current.renewAtMs) this.renew().catch(() => {});
      return current.token;
    }
    return (await abortable(this.renew(), signal)).token;
  }

  /** Forget a bearer the API refused, unless a newer one already replaced it. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = null;
    this.refused = token;
    this.options.shared
      ?.drop(token)
      .catch((error: unknown) =>
        this.options.logger.warn(
          { op: EXCHANGE_OPERATION, err: (error as Error).message },
          "could not drop the refused bearer from the shared store",
        ),
      );
  }

  /** The clock correction learnt from the server's `Date` header (server minus local). */
  get clockOffsetMs(): number {
    return this.exchange.clockOffsetMs;
  }

  private renew(): Promise<Bearer> {
    if (!this.inflight) {
      const shared = this.options.shared;
      // One exchange serves every caller: it takes turns on its own lane, not its first caller's.
      // Its span is a child of the request that found the bearer due (none in the background).
      const span = { childOnly: true, attributes: { "portfolio.bearer.shared": !!shared } };
      this.inflight = asPrincipal(SIGN_IN_PRINCIPAL, () =>
        traced("bearer renewal", span, () =>
          shared ? this.renewShared(shared) : this.exchange.run(),
        ),
      )
        .then((bearer) => {
          this.current = bearer;
          return bearer;
        })
        .finally(() => {
          this.inflight = null;
        });
      // Failures reach the callers awaiting this promise; a background renewal just tries again later.
      this.inflight.catch((error: unknown) =>
        this.options.logger.warn(
          { op: EXCHANGE_OPERATION, err: (error as Error).message },
          "token exchange failed",
        ),
      );
    }
    return this.inflight;
  }

  /**
   * Renewal across processes: take the fleet's bearer when another process already renewed it;
   * else take the lock and exchange once; else wait for the lock holder's bearer. Redis being
   * unreachable never stops calls: this process then exchanges on its own.
   */
  private async renewShared(shared: SharedBearerStore): Promise<Bearer> {
    const { clock, logger } = this.options;
    const deadline = clock() + SHARED_WAIT_MS;
    const usable = (b: Bearer | null): b is Bearer =>
      b !== null && b.token !== this.refused && clock() < b.renewAtMs;
    try {
      for (;;) {
        const stored = await shared.read();
        if (usable(stored)) return this.adopt(stored);
        const lock = await shared.lock();
        if (lock) {
          try {
            const again = await shared.read(); // renewed between our read and our lock
            if (usable(again)) return this.adopt(again);
            const bearer = await this.exchange.run();
            if (!(await shared.publish(bearer, lock)))
              logger.warn({ op: EXCHANGE_OPERATION }, "renewal lock lost; bearer kept locally");
            return bearer;
          } finally {
            await shared.unlock(lock).catch(() => {});
          }
        }
        if (clock() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, SHARED_POLL_MS));
      }
      logger.warn({ op: EXCHANGE_OPERATION }, "no shared bearer in time; exchanging alone");
    } catch (error) {
      if (error instanceof ApiError) throw error; // the exchange itself failed
      logger.warn(
        { op: EXCHANGE_OPERATION, err: (error as Error).message },
        "shared bearer store unavailable; exchanging alone",
      );
    }
    return this.exchange.run();
  }

  private adopt(bearer: Bearer): Bearer {
    this.options.onBearer?.(bearer.token);
    return bearer;
  }
}

function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(cancelledWait());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelledWait());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

const cancelledWait = () => cancelled({ operationId: EXCHANGE_OPERATION, requestId: "" });
