import type { Cooldown } from "../api/cooldown.js";
import { ApiError, errorFromResponse } from "../api/errors.js";
import type { HttpReply, NetworkError, Transport } from "../api/http.js";
import { parseRetryAfter, type RetryPolicy, retryDelayMs, shouldRetry } from "../api/retry.js";
import type { Logger } from "../log.js";
import { bearerExpiry, renewalMarginMs } from "./expiry.js";
import { exchangeMessage, newNonce, signExchange } from "./signer.js";

export const EXCHANGE_OPERATION = "auth_token";
/** A `Date` header this far from our clock (beyond its 1 s resolution) means our clock is off. */
const CLOCK_GAP_THRESHOLD_MS = 2_000;
/** Never hand out a bearer this close to its end: it could expire on the wire. */
const EXPIRY_GUARD_MS = 1_000;

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface TokenManagerOptions {
  baseUrl: string;
  keyId: string;
  secret: string;
  prefix: string;
  transport: Transport;
  cooldown: Cooldown;
  policy: RetryPolicy;
  maxRetryWaitMs: number;
  logger: Logger;
  clock: () => number;
  sleep: Sleep;
  random: () => number;
  /** Told of every bearer issued, so logs can scrub it. */
  onBearer?: (token: string) => void;
  /** Removes known secrets from upstream text before it is kept on an error. */
  scrub?: (text: string) => string;
}

interface Bearer {
  token: string;
  expiresAtMs: number;
  renewAtMs: number;
}

/**
 * The one component that holds a bearer (spec part 5). `get()` returns a valid one: cached,
 * renewed shortly before it expires by a single exchange whatever the number of callers, and
 * exchanged again with a fresh nonce after a 401. The secret signs and goes nowhere else.
 */
export class TokenManager {
  private current: Bearer | null = null;
  private inflight: Promise<Bearer> | null = null;
  private serverOffsetMs = 0;
  /** Signed exchanges sent (each with its own nonce). */
  exchanges = 0;

  constructor(private readonly options: TokenManagerOptions) {}

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
  }

  /** The clock correction learnt from the server's `Date` header (server minus local). */
  get clockOffsetMs(): number {
    return this.serverOffsetMs;
  }

  private renew(): Promise<Bearer> {
    if (!this.inflight) {
      this.inflight = this.exchange()
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

  private async exchange(): Promise<Bearer> {
    const { clock, policy } = this.options;
    const started = clock();
    let retries = 0;
    let clockCorrected = false;
    for (let attempt = 1; ; attempt++) {
      await this.waitForCooldown();
      const sentAt = clock();
      let reply: HttpReply;
      try {
        reply = await this.sendSignedExchange();
      } catch (error) {
        const failure = error as NetworkError;
        this.log(attempt, null, sentAt);
        const delay = retryDelayMs(retries, null, policy, this.options.random);
        const outcome = { kind: "network" as const, code: failure.kind };
        if (
          !shouldRetry({
            outcome,
            retriesSoFar: retries,
            elapsedMs: clock() - started,
            nextDelayMs: delay,
            policy,
          })
        ) {
          throw new ApiError(
            `The token exchange at ${this.options.baseUrl} failed: ${failure.message}.`,
            {
              code: failure.kind === "timeout" ? "timeout" : "network_error",
              operationId: EXCHANGE_OPERATION,
              detail: failure.message,
              upstream: this.options.baseUrl,
            },
          );
        }
        retries++;
        await this.options.sleep(delay);
        continue;
      }
      const receivedAt = clock();
      this.log(attempt, reply.status, sentAt);
      if (reply.status === 200) return this.bearerFrom(reply, receivedAt);

      if (
        reply.status === 401 &&
        !clockCorrected &&
        this.learnClockOffset(reply, sentAt, receivedAt)
      ) {
        clockCorrected = true; // one more try with the corrected timestamp and a new nonce
        continue;
      }
      const retryAfterMs = parseRetryAfter(reply.headers["retry-after"], clock());
      if (reply.status === 429) this.options.cooldown.extend(retryAfterMs ?? 1_000);
      const delay = retryDelayMs(retries, retryAfterMs, policy, this.options.random);
      const outcome = { kind: "status" as const, status: reply.status };
      if (
        shouldRetry({
          outcome,
          retriesSoFar: retries,
          elapsedMs: clock() - started,
          nextDelayMs: delay,
          policy,
        })
      ) {
        retries++;
        if (reply.status !== 429) await this.options.sleep(delay); // a 429 waits in the cooldown
        continue;
      }
      throw errorFromResponse(
        {
          operationId: EXCHANGE_OPERATION,
          requestId: reply.headers["x-request-id"] ?? "",
          status: reply.status,
          contentType: reply.headers["content-type"] ?? "",
          body: reply.body,
          retryAfterSeconds: retryAfterMs === null ? undefined : Math.ceil(retryAfterMs / 1000),
          upstream: this.options.baseUrl,
        },
        this.options.scrub,
      );
    }
  }

  /** A fresh nonce and the current (corrected) time, every time: no signed payload twice. */
  private sendSignedExchange(): Promise<HttpReply> {
    const { keyId, secret, prefix, baseUrl, transport, clock } = this.options;
    const timestamp = Math.floor((clock() + this.serverOffsetMs) / 1000);
    const nonce = newNonce();
    const signature = signExchange(secret, exchangeMessage(prefix, keyId, timestamp, nonce));
    this.exchanges++;
    return transport.send({
      method: "POST",
      url: `${baseUrl}/auth/token`,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ key_id: keyId, timestamp, nonce, signature }),
    });
  }

  /** True when the answer's `Date` shows our clock is off by more than its resolution. */
  private learnClockOffset(reply: HttpReply, sentAt: number, receivedAt: number): boolean {
    const serverNow = Date.parse(reply.headers.date ?? "");
    if (Number.isNaN(serverNow)) return false;
    const offset = serverNow - (sentAt + receivedAt) / 2;
    if (Math.abs(offset - this.serverOffsetMs) <= CLOCK_GAP_THRESHOLD_MS) return false;
    this.options.logger.warn(
      { op: EXCHANGE_OPERATION, clockOffsetMs: Math.round(offset) },
      "correcting for clock skew",
    );
    this.serverOffsetMs = offset;
    return true;
  }

  private bearerFrom(reply: HttpReply, receivedAt: number): Bearer {
    let body: Record<string, unknown> | null = null;
    try {
      body = JSON.parse(reply.body.toString("utf8")) as Record<string, unknown>;
    } catch {}
    const token = body?.access_token;
    if (typeof token !== "string" || token === "") {
      throw new ApiError("The token exchange answered without an access_token.", {
        code: "unexpected_response",
        operationId: EXCHANGE_OPERATION,
        status: reply.status,
      });
    }
    this.options.onBearer?.(token);
    const expiresAtMs = bearerExpiry({
      expiresAt: body?.expires_at,
      expiresIn: body?.expires_in,
      receivedAtMs: receivedAt,
      serverOffsetMs: this.serverOffsetMs,
    });
    return {
      token,
      expiresAtMs,
      renewAtMs: expiresAtMs - renewalMarginMs(expiresAtMs - receivedAt),
    };
  }

  private async waitForCooldown(): Promise<void> {
    const wait = this.options.cooldown.remainingMs();
    if (wait === 0) return;
    if (wait > this.options.maxRetryWaitMs) {
      const seconds = Math.ceil(wait / 1000);
      throw new ApiError(
        `The Partner API asked to wait ${seconds} s (rate limit); retry after that.`,
        {
          code: "rate_limited",
          operationId: EXCHANGE_OPERATION,
          retryAfterSeconds: seconds,
        },
      );
    }
    await this.options.sleep(wait);
  }

  private log(attempt: number, status: number | null, sentAt: number): void {
    this.options.logger.info(
      { op: EXCHANGE_OPERATION, status, ms: Math.round(this.options.clock() - sentAt), attempt },
      "token exchange",
    );
  }
}

function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
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

function cancelled(): ApiError {
  return new ApiError("The call was cancelled.", {
    code: "aborted",
    operationId: EXCHANGE_OPERATION,
  });
}
