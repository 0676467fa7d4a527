import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { delegationHeaders } from "../auth/delegation.js";
import { type Sleep, TokenManager } from "../auth/token-manager.js";
import type { ApiSettings, DelegatedUser } from "../config.js";
import { describeIssue, type FieldError } from "../field-errors.js";
import { type Logger, SecretRedactor } from "../log.js";
import type { Operation, OperationId, OperationInput } from "./catalogue.js";
import { Cooldown } from "./cooldown.js";
import {
  ApiError,
  errorFromResponse,
  invalidInput,
  isInProgressConflict,
  reasonCodeOf,
} from "./errors.js";
import { createTransport, type HttpReply, type NetworkError, type Transport } from "./http.js";
import { readSuccessBody } from "./response.js";
import {
  type AttemptOutcome,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type RetryPolicy,
  retryDelayMs,
  shouldRetry,
} from "./retry.js";
import { resolveRoutes } from "./routes.js";

export interface ApiClientOptions {
  settings: ApiSettings;
  logger: Logger;
  /** Scrubs the secret and every bearer from log lines. */
  redactor?: SecretRedactor;
  routes?: ReadonlyMap<OperationId, Operation>;
  transport?: Transport;
  clock?: () => number;
  sleep?: Sleep;
  random?: () => number;
  userAgent?: string;
  /** Told of every upstream attempt (status null: no answer), for metrics. */
  onAttempt?: (operation: string, status: number | null) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Sent as X-Request-ID; generated when absent. */
  requestId?: string;
  /** For writes: the intent's key, reused by every retry. Generated when absent. */
  idempotencyKey?: string;
  /** Whom a `/users/me*` call acts for; defaults to the configured delegated user. */
  delegatedUser?: DelegatedUser | null;
  /**
   * Sends input the catalogue would refuse. Only for `doctor`'s probes, which send a request
   * the API must refuse, to learn whether the key may write without writing anything.
   */
  unchecked?: boolean;
}

export interface ApiResult<T = unknown> {
  status: number;
  data: T;
  requestId: string;
  contentType: string;
  /** How many HTTP attempts the call took, renewals and retries included. */
  attempts: number;
}

interface PreparedCall {
  operation: Operation;
  url: string;
  body: string | undefined;
  delegation: Record<string, string>;
}

const abortableSleep: Sleep = (ms, signal) => delay(ms, undefined, { signal });

/**
 * Calls Partner API operations by id: validates the input against the catalogue, signs in,
 * sends, retries what is safe to retry, and turns every failure into an ApiError.
 */
export class ApiClient {
  readonly tokens: TokenManager;
  readonly routes: ReadonlyMap<OperationId, Operation>;
  private readonly transport: Transport;
  private readonly cooldown: Cooldown;
  private readonly policy: RetryPolicy;
  private readonly clock: () => number;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  /** Retries made after a failed attempt (401 renewals not included). */
  retries = 0;

  /** Upstream text (problem details, error pages) never carries a secret onwards. */
  private readonly scrub: (text: string) => string;

  constructor(private readonly options: ApiClientOptions) {
    const { settings } = options;
    const redactor = options.redactor ?? new SecretRedactor();
    this.scrub = (text) => redactor.scrub(text);
    this.routes = options.routes ?? resolveRoutes(settings.routesFile);
    this.transport = options.transport ?? createTransport({ timeoutMs: settings.timeoutMs });
    this.clock = options.clock ?? Date.now;
    this.sleep = options.sleep ?? abortableSleep;
    this.random = options.random ?? Math.random;
    this.cooldown = new Cooldown(this.clock);
    this.policy = { ...DEFAULT_RETRY_POLICY, maxRetries: settings.maxRetries };
    redactor.add(settings.secret);
    this.tokens = new TokenManager({
      baseUrl: settings.baseUrl,
      keyId: settings.keyId,
      secret: settings.secret,
      prefix: settings.tokenPrefix,
      transport: this.transport,
      cooldown: this.cooldown,
      policy: this.policy,
      maxRetryWaitMs: settings.maxRetryWaitSeconds * 1000,
      logger: options.logger,
      clock: this.clock,
      sleep: this.sleep,
      random: this.random,
      onBearer: (token) => redactor.add(token),
      scrub: this.scrub,
    });
  }

  get settings(): ApiSettings {
    return this.options.settings;
  }

  /** The route in force for an operation (after PORTFOLIO_ROUTES_FILE). */
  operation(id: OperationId): Operation {
    const operation = this.routes.get(id);
    if (!operation) throw new Error(`unknown operation ${id}`);
    return operation;
  }

  async call<Id extends OperationId>(
    id: Id,
    input: OperationInput<Id>,
    options: CallOptions = {},
  ): Promise<ApiResult> {
    const prepared = this.prepare(id, input as CallInput, options);
    const requestId = options.requestId ?? `pmcp-${randomUUID()}`;
    // Fixed once, before any retry: every attempt of this write carries the same key.
    const idempotencyKey =
      prepared.operation.method === "GET"
        ? undefined
        : (options.idempotencyKey ?? `pmcp-${randomUUID()}`);
    const started = this.clock();
    let renewedAfter401 = false;
    let retries = 0;

    for (let attempt = 1; ; attempt++) {
      await this.waitForCooldown(id, requestId, options.signal);
      const bearer = await this.tokens.get(options.signal);
      const sentAt = this.clock();
      let reply: HttpReply;
      try {
        reply = await this.transport.send({
          method: prepared.operation.method,
          url: prepared.url,
          headers: this.headers(prepared, bearer, requestId, idempotencyKey),
          body: prepared.body,
          signal: options.signal,
        });
      } catch (error) {
        const failure = error as NetworkError;
        this.logAttempt(id, null, sentAt, requestId, attempt);
        if (failure.kind === "aborted")
          throw this.failure("aborted", id, requestId, "The call was cancelled.");
        const wait = retryDelayMs(retries, null, this.policy, this.random);
        const outcome = { kind: "network" as const, code: failure.kind };
        if (failure.kind !== "other" && this.mayRetry(outcome, retries, started, wait)) {
          retries++;
          await this.pause(wait, id, requestId, options.signal);
          continue;
        }
        throw new ApiError(
          `The Partner API at ${this.options.settings.baseUrl} could not be reached for ${id}: ${failure.message}.`,
          {
            code: failure.kind === "timeout" ? "timeout" : "network_error",
            operationId: id,
            requestId,
            detail: failure.message,
            upstream: this.options.settings.baseUrl,
          },
        );
      }
      this.logAttempt(id, reply.status, sentAt, requestId, attempt);

      if (reply.status >= 200 && reply.status < 300) {
        return {
          status: reply.status,
          data: readSuccessBody(reply, prepared.operation.response, { operationId: id, requestId }),
          requestId,
          contentType: reply.headers["content-type"] ?? "",
          attempts: attempt,
        };
      }
      if (reply.status === 401 && !renewedAfter401) {
        // The bearer was refused (expired, revoked): exchange again, once, and resend.
        renewedAfter401 = true;
        this.tokens.invalidate(bearer);
        continue;
      }
      const retryAfterMs = parseRetryAfter(reply.headers["retry-after"], this.clock());
      if (reply.status === 429) this.cooldown.extend(retryAfterMs ?? 1_000);
      const wait = retryDelayMs(retries, retryAfterMs, this.policy, this.random);
      const inProgress =
        reply.status === 409 &&
        isInProgressConflict(
          409,
          reasonCodeOf(reply.body, reply.headers["content-type"] ?? ""),
          reply.headers["retry-after"],
        );
      if (
        this.mayRetry({ kind: "status", status: reply.status, inProgress }, retries, started, wait)
      ) {
        retries++;
        if (reply.status !== 429) await this.pause(wait, id, requestId, options.signal); // a 429 waits in the cooldown
        continue;
      }
      throw errorFromResponse(
        {
          operationId: id,
          requestId,
          status: reply.status,
          contentType: reply.headers["content-type"] ?? "",
          body: reply.body,
          retryAfterSeconds: retryAfterMs === null ? undefined : Math.ceil(retryAfterMs / 1000),
          upstream: this.options.settings.baseUrl,
        },
        this.scrub,
      );
    }
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  /** Validates and builds everything about the request that does not change between attempts. */
  private prepare(id: OperationId, input: CallInput, options: CallOptions): PreparedCall {
    const operation = this.operation(id);
    const errors: FieldError[] = [];
    const parse = (
      schema: Operation["params"] | Operation["query"] | Operation["body"],
      value: unknown,
      what: string,
    ) => {
      if (!schema) {
        const empty =
          value === undefined ||
          (typeof value === "object" && value !== null && Object.keys(value).length === 0);
        if (!empty)
          errors.push({ field: what, rule: "not accepted", message: `${id} takes no ${what}` });
        return undefined;
      }
      const result = schema.safeParse(value ?? (what === "body" ? undefined : {}));
      if (result.success) return result.data as unknown;
      errors.push(...result.error.issues.map((issue) => describeIssue(issue)));
      return undefined;
    };
    const params = parse(operation.params, input.path, "path parameters") as
      | Record<string, unknown>
      | undefined;
    const query = parse(operation.query, input.query, "query") as
      | Record<string, unknown>
      | undefined;
    const body = options.unchecked ? input.body : parse(operation.body, input.body, "body");
    // A URL resolves `.` and `..` segments, which would send the call to another route.
    for (const [name, value] of Object.entries(params ?? {})) {
      if (value === "." || value === "..")
        errors.push({ field: name, rule: "not a dot segment", message: "must not be . or .." });
    }
    if (errors.length > 0) throw invalidInput(id, errors);

    let delegation: Record<string, string> = {};
    if (operation.capability) {
      const user =
        options.delegatedUser === undefined
          ? this.options.settings.delegatedUser
          : options.delegatedUser;
      if (!user) {
        throw new ApiError(
          `${id} acts for a user: set PORTFOLIO_DELEGATED_USER_EMAIL or PORTFOLIO_DELEGATED_USER_ID (nothing was sent).`,
          { code: "not_configured", operationId: id },
        );
      }
      delegation = delegationHeaders(this.options.settings.delegationHeaderPrefix, user);
    }
    const path = operation.path.replace(/\{([^{}]+)\}/g, (_, name: string) =>
      encodeURIComponent(String(params?.[name] ?? "")),
    );
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {}))
      if (value !== undefined) search.append(name, String(value));
    const qs = search.toString();
    return {
      operation,
      url: `${this.options.settings.baseUrl}${path}${qs ? `?${qs}` : ""}`,
      body: body === undefined ? undefined : JSON.stringify(body),
      delegation,
    };
  }

  private headers(
    prepared: PreparedCall,
    bearer: string,
    requestId: string,
    idempotencyKey: string | undefined,
  ): Record<string, string> {
    return {
      accept:
        prepared.operation.response === "xlsx"
          ? "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
          : "application/json",
      authorization: `Bearer ${bearer}`,
      "x-request-id": requestId,
      "user-agent": this.options.userAgent ?? "portfolio-mcp",
      ...(prepared.body === undefined ? {} : { "content-type": "application/json" }),
      ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
      ...prepared.delegation,
    };
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
      elapsedMs: this.clock() - started,
      nextDelayMs,
      policy: this.policy,
    });
    if (allowed) this.retries++;
    return allowed;
  }

  private async waitForCooldown(
    id: OperationId,
    requestId: string,
    signal?: AbortSignal,
  ): Promise<void> {
    const wait = this.cooldown.remainingMs();
    if (wait === 0) return;
    if (wait > this.options.settings.maxRetryWaitSeconds * 1000) {
      const seconds = Math.ceil(wait / 1000);
      throw new ApiError(
        `The Partner API is rate limiting this key; retry ${id} in ${seconds} s.`,
        {
          code: "rate_limited",
          operationId: id,
          requestId,
          retryAfterSeconds: seconds,
        },
      );
    }
    await this.pause(wait, id, requestId, signal);
  }

  /** Waits, unless the caller cancels: then the call ends as `aborted`. */
  private async pause(
    ms: number,
    id: OperationId,
    requestId: string,
    signal?: AbortSignal,
  ): Promise<void> {
    try {
      await this.sleep(ms, signal);
    } catch {
      throw this.failure("aborted", id, requestId, "The call was cancelled.");
    }
  }

  private failure(
    code: ApiError["code"],
    id: OperationId,
    requestId: string,
    message: string,
  ): ApiError {
    return new ApiError(message, { code, operationId: id, requestId });
  }

  private logAttempt(
    id: OperationId,
    status: number | null,
    sentAt: number,
    requestId: string,
    attempt: number,
  ): void {
    this.options.onAttempt?.(id, status);
    this.options.logger.info(
      { op: id, status, ms: Math.round(this.clock() - sentAt), requestId, attempt },
      "upstream call",
    );
  }
}

interface CallInput {
  path?: unknown;
  query?: unknown;
  body?: unknown;
}
