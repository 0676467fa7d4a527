import { randomUUID } from "node:crypto";
import { type AttemptLoop, EXCHANGE_OPERATION, type Timing } from "../http/attempts.js";
import { ApiError, answerTooLarge, errorFromReply } from "../http/errors.js";
import type { HttpReply } from "../http/transport.js";
import type { Logger } from "../log.js";
import { bearerExpiry, renewalMarginMs } from "./expiry.js";
import type { Bearer } from "./shared-bearer.js";
import { exchangeMessage, newNonce, signExchange } from "./signer.js";

/** A `Date` header this far from our clock (beyond its 1 s resolution) means our clock is off. */
const CLOCK_GAP_THRESHOLD_MS = 2_000;

export interface TokenExchangeOptions {
  baseUrl: string;
  keyId: string;
  secret: string;
  prefix: string;
  /** The attempt loop every call to the API goes through (shared cooldown and retries). */
  loop: AttemptLoop;
  logger: Logger;
  clock: () => number;
  /** Told of every bearer issued, so logs can scrub it. */
  onBearer?: (token: string) => void;
  /** Removes known secrets from upstream text before it is kept on an error. */
  scrub?: (text: string) => string;
}

/**
 * The signed token exchange (spec part 5): the secret signs a key id, a timestamp and a nonce,
 * and the API answers with a bearer. It keeps what the API's clock taught it between exchanges.
 */
export class TokenExchange {
  private serverOffsetMs = 0;
  /** Signed exchanges sent (each with its own nonce). */
  exchanges = 0;

  constructor(private readonly options: TokenExchangeOptions) {}

  /** The clock correction learnt from the server's `Date` header (server minus local). */
  get clockOffsetMs(): number {
    return this.serverOffsetMs;
  }

  /**
   * One signed exchange through the shared attempt loop: a fresh nonce and timestamp on every
   * attempt (no signed payload is sent twice), and one more attempt after a 401 whose Date shows
   * our clock is off. Nobody's signal cancels it: many callers may be waiting for it.
   */
  async run(): Promise<Bearer> {
    let clockCorrected = false;
    const exchange = {
      operationId: EXCHANGE_OPERATION,
      requestId: `pmcp-${randomUUID()}`,
      route: "/auth/token",
      upstream: this.options.baseUrl,
      build: () => this.signed(),
      again: (reply: HttpReply, timing: Timing) => {
        if (reply.status !== 401 || clockCorrected) return false;
        clockCorrected = this.learnClockOffset(reply, timing.sentAt, timing.receivedAt);
        return clockCorrected;
      },
    };
    const { reply, receivedAt } = await this.options.loop.run(exchange);
    const unread = answerTooLarge(reply, {
      operationId: EXCHANGE_OPERATION,
      requestId: exchange.requestId,
      upstream: this.options.baseUrl,
    });
    if (unread) throw unread;
    if (reply.status === 200) return this.bearerFrom(reply, receivedAt);
    throw errorFromReply(
      reply,
      {
        operationId: EXCHANGE_OPERATION,
        requestId: reply.headers["x-request-id"] ?? exchange.requestId,
        upstream: this.options.baseUrl,
      },
      this.options.scrub,
      this.options.clock(),
    );
  }

  /** The exchange request: the current (corrected) time and a new nonce, signed. */
  private signed() {
    const { keyId, secret, prefix, baseUrl, clock } = this.options;
    const timestamp = Math.floor((clock() + this.serverOffsetMs) / 1000);
    const nonce = newNonce();
    const signature = signExchange(secret, exchangeMessage(prefix, keyId, timestamp, nonce));
    this.exchanges++;
    return {
      method: "POST",
      url: `${baseUrl}/auth/token`,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ key_id: keyId, timestamp, nonce, signature }),
    };
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
}
