import type { Logger } from "../log.js";
import { type ActiveSpan, activeTraceparent, traced } from "../telemetry/tracing.js";
import type { Cooldown } from "./cooldown.js";
import { ApiError, cancelled, isInProgressConflict, reasonCodeOf } from "./errors.js";
import { currentCaller, noteCall, SERVER_PRINCIPAL } from "./principal.js";
import {
  type AttemptOutcome,
  parseRetryAfter,
  type RetryPolicy,
  retryDelayMs,
  shouldRetry,
} from "./retry.js";
import { type HttpReply, type HttpRequest, NetworkError, type Transport } from "./transport.js";
import type { UpstreamPermit, UpstreamShare } from "./upstream-share.js";

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface AttemptLoopOptions {
  transport: Transport;
  /** Shared by every call of a client: after a 429 nobody sends until it has passed. */
  cooldown: Cooldown;
  /** Every attempt waits here for its principal's turn within the key's rate. */
  share: UpstreamShare;
  policy: RetryPolicy;
  /** The longest cooldown a call waits out; beyond it the call ends as rate_limited. */
  maxRetryWaitMs: number;
  logger: Logger;
  clock: () => number;
  sleep: Sleep;
  random: () => number;
  /** Told of every attempt (status null: no answer) and how long it took, for metrics. */
  onAttempt?: (operation: string, status: number | null, ms: number) => void;
}

/** One request to send until it gets an answer worth keeping. */
export interface Exchange {
  operationId: string;
  requestId: string;
  /** The operation's route template (`/operations/{id}`): names its attempts' spans. */
  route?: string;
  /** The API's base URL, named in failures. */
  upstream: string;
  /** Aborts every wait and the request in flight; the call ends as `aborted`. */
  signal?: AbortSignal;
  /** Builds one attempt: a fresh nonce, the current bearer. */
  build(): Promise<Omit<HttpRequest, "signal">> | Omit<HttpRequest, "signal">;
  /** An answer the caller handles itself: true to go again at once (a renewed bearer). */
  again?(reply: HttpReply, timing: Timing): boolean;
}

export interface Timing {
  sentAt: number;
  receivedAt: number;
}

export interface Attempted extends Timing {
  reply: HttpReply;
  attempts: number;
}

/**
 * The one attempt loop of every call to the API, token exchanges and business calls alike: the
 * shared cooldown, retries of what is safe to retry (full jitter, or the server's Retry-After),
 * and waits that the caller's cancellation interrupts. It returns the last answer; the caller
 * decides what a success or a refusal means (stripe-node's RequestSender, octokit's retry).
 */
export class AttemptLoop {
  /** Retries made after a failed attempt (immediate goes-again not counted). */
  retries = 0;

  constructor(private readonly options: AttemptLoopOptions) {}

  get cooldown(): Cooldown {
    return this.options.cooldown;
  }

  async run(exchange: Exchange): Promise<Attempted> {
    const started = this.options.clock();
    let retries = 0;
    for (let attempt = 1; ; attempt++) {
      const tried = await this.attempt(exchange, attempt);
      if (tried instanceof NetworkError) {
        const wait = this.networkRetry(tried, exchange, retries, started);
        retries++;
        await this.pause(wait, exchange);
        continue;
      }
      const { reply, sentAt, receivedAt, turn } = tried;
      if (reply.status >= 200 && reply.status < 300)
        return { reply, sentAt, receivedAt, attempts: attempt };
      if (exchange.again?.(reply, { sentAt, receivedAt })) continue;
      const wait = this.statusRetry(reply, turn, retries, started);
      if (wait === null) return { reply, sentAt, receivedAt, attempts: attempt };
      retries++;
      if (reply.status !== 429) await this.pause(wait, exchange); // a 429 waits in the cooldown
    }
  }

  /**
   * One attempt in its principal's turn: the request built then (the bearer is current when it
   * leaves), sent once any cooldown is over. A network failure is returned, to be judged.
   */
  private async attempt(
    exchange: Exchange,
    attempt: number,
  ): Promise<(Timing & { reply: HttpReply; turn: UpstreamPermit }) | NetworkError> {
    const { clock } = this.options;
    const waitFrom = clock();
    await this.waitForCooldown(exchange);
    const turn = await this.options.share.acquire(exchange);
    let sentAt = clock();
    let reply: HttpReply;
    try {
      const request = await exchange.build();
      await this.waitForCooldown(exchange); // one that began while this call waited its turn
      sentAt = clock();
      reply = await sendInSpan(
        this.options.transport,
        exchange,
        request,
        attempt,
        sentAt - waitFrom,
      );
    } catch (error) {
      turn.release();
      if (!(error instanceof NetworkError)) throw error;
      this.log(exchange, null, sentAt, attempt);
      if (error.kind === "aborted") throw cancelled(exchange);
      return error;
    }
    turn.release();
    const receivedAt = clock();
    this.log(exchange, reply.status, sentAt, attempt);
    return { reply, sentAt, receivedAt, turn };
  }

  /** The wait before retrying after a network failure, or the error that ends the call. */
  private networkRetry(
    failure: NetworkError,
    exchange: Exchange,
    retries: number,
    started: number,
  ): number {
    const wait = retryDelayMs(retries, null, this.options.policy, this.options.random);
    const outcome = { kind: "network" as const, code: failure.kind };
    if (failure.kind !== "other" && this.mayRetry(outcome, retries, started, wait)) return wait;
    throw new ApiError(
      `The Partner API at ${exchange.upstream} could not be reached for ${exchange.operationId}: ${failure.message}.`,
      {
        code: failure.kind === "timeout" ? "timeout" : "network_error",
        operationId: exchange.operationId,
        requestId: exchange.requestId,
        detail: failure.message,
        upstream: exchange.upstream,
      },
    );
  }

  /**
   * The wait before retrying after an error status, or null when the answer is final. A 429
   * starts the key's cooldown and slows the principal that drew it first.
   */
  private statusRetry(
    reply: HttpReply,
    turn: UpstreamPermit,
    retries: number,
    started: number,
  ): number | null {
    const retryAfterMs = parseRetryAfter(reply.headers["retry-after"], this.options.clock());
    if (reply.status === 429) {
      this.options.cooldown.extend(retryAfterMs ?? 1_000);
      turn.throttled(retryAfterMs ?? 1_000);
    }
    const wait = retryDelayMs(retries, retryAfterMs, this.options.policy, this.options.random);
    const inProgress =
      reply.status === 409 &&
      isInProgressConflict(
        409,
        reasonCodeOf(reply.body, reply.headers["content-type"] ?? ""),
        reply.headers["retry-after"],
      );
    const outcome = { kind: "status" as const, status: reply.status, inProgress };
    return this.mayRetry(outcome, retries, started, wait) ? wait : null;
  }

  private mayRetry(
    outcome: AttemptOutcome,
    retries: number,
    started: number,
    nextDelayMs: number,
  ): boolean {
    const allowed = shouldRetry({
      outcome,
      retriesSoFar: retries,
      elapsedMs: this.options.clock() - started,
      nextDelayMs,
      policy: this.options.policy,
    });
    if (allowed) this.retries++;
    return allowed;
  }

  private async waitForCooldown(exchange: Exchange): Promise<void> {
    const wait = this.options.cooldown.remainingMs();
    if (wait === 0) return;
    if (wait > this.options.maxRetryWaitMs) {
      const seconds = Math.ceil(wait / 1000);
      throw new ApiError(
        `The Partner API is rate limiting this key; retry ${exchange.operationId} in ${seconds} s.`,
        {
          code: "rate_limited",
          operationId: exchange.operationId,
          requestId: exchange.requestId,
          retryAfterSeconds: seconds,
        },
      );
    }
    await this.pause(wait, exchange);
  }

  /** Waits, unless the caller cancels: then the call ends as `aborted`. */
  private async pause(ms: number, exchange: Exchange): Promise<void> {
    try {
      await this.options.sleep(ms, exchange.signal);
    } catch {
      throw cancelled(exchange);
    }
  }

  private log(exchange: Exchange, status: number | null, sentAt: number, attempt: number): void {
    const ms = Math.round(this.options.clock() - sentAt);
    this.options.onAttempt?.(exchange.operationId, status, ms);
    noteCall({
      operation: exchange.operationId,
      status,
      requestId: exchange.requestId,
      ms,
      attempt,
    });
    this.options.logger.info(
      {
        op: exchange.operationId,
        status,
        ms,
        requestId: exchange.requestId,
        attempt,
        // Who the call was made for (never a token or a person's name: the principal's id).
        principal: currentCaller()?.principal ?? SERVER_PRINCIPAL,
      },
      exchange.operationId === EXCHANGE_OPERATION ? "token exchange" : "upstream call",
    );
  }
}

/**
 * One attempt on the wire, in a client span of the request that caused it (OpenTelemetry HTTP
 * conventions: method, route template, status, resend count; the API's request id, the wait
 * before it, a 429's Retry-After), which the request carries as its `traceparent`.
 */
function sendInSpan(
  transport: Transport,
  exchange: Exchange,
  request: Omit<HttpRequest, "signal">,
  attempt: number,
  waitedMs: number,
): Promise<HttpReply> {
  const name = `${request.method} ${exchange.route ?? exchange.operationId}`;
  return traced(name, ATTEMPT, async (span) => {
    // Described only in a span that keeps it (childOnly: a request's trace that is sampled).
    span?.set({
      "http.request.method": request.method,
      "url.template": exchange.route,
      "http.request.resend_count": attempt > 1 ? attempt - 1 : undefined,
      "portfolio.operation.id": exchange.operationId,
      "portfolio.upstream.request_id": exchange.requestId,
      "portfolio.upstream.waited_ms": waitedMs > 0 ? Math.round(waitedMs) : undefined,
    });
    // This attempt's span, or the request's when it is not sampled (the flag says so).
    const traceparent = activeTraceparent();
    const headers = traceparent ? { ...request.headers, traceparent } : request.headers;
    try {
      const reply = await transport.send({
        ...request,
        headers,
        signal: exchange.signal,
      });
      if (span) describeReply(span, reply);
      return reply;
    } catch (error) {
      if (error instanceof NetworkError) span?.fail(error.kind); // timeout, connection…
      throw error;
    }
  });
}

const ATTEMPT = { kind: "client" as const, childOnly: true };

/** What an answer says on its attempt's span: the status, and a refusal's type and wait. */
function describeReply(span: ActiveSpan, reply: HttpReply): void {
  const retryAfter = reply.status === 429 ? reply.headers["retry-after"] : undefined;
  span.set({
    "http.response.status_code": reply.status,
    "portfolio.upstream.request_id": reply.headers["x-request-id"],
    "portfolio.upstream.retry_after": retryAfter,
  });
  if (reply.status >= 400) span.fail(String(reply.status));
}

export const EXCHANGE_OPERATION = "auth_token";

export { cancelled };
