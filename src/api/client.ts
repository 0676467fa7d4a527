import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { describeIssue, type FieldError } from "@portfolio-mcp/field-errors";
import { delegationHeaders } from "../auth/delegation.js";
import { RedisBearerStore } from "../auth/shared-bearer.js";
import { TokenManager } from "../auth/token-manager.js";
import type { ApiSettings, DelegatedUser } from "../config.js";
import { AttemptLoop, type Sleep } from "../http/attempts.js";
import { Cooldown } from "../http/cooldown.js";
import { ApiError, answerTooLarge, errorFromReply, invalidInput } from "../http/errors.js";
import { RedisShareStore } from "../http/redis-share.js";
import { DEFAULT_RETRY_POLICY } from "../http/retry.js";
import { CooldownBroadcast } from "../http/shared-cooldown.js";
import { createTransport, type Transport } from "../http/transport.js";
import { LocalShareStore, type ShareEvents, UpstreamShare } from "../http/upstream-share.js";
import { type Logger, SecretRedactor } from "../log.js";
import type { SharedRedis } from "../state/redis.js";
import { staysUnderBase } from "./base-path.js";
import type { Operation, OperationId, OperationInput } from "./catalogue.js";
import { multipartBody } from "./multipart.js";
import { readSuccessBody, XLSX_MIME } from "./response.js";
import { resolveRoutes } from "./routes.js";

export interface ApiClientDeps {
  settings: ApiSettings;
  logger: Logger;
  /** Holds the bearer; given to the client, which never signs anything itself. */
  tokens: TokenManager;
  /** The attempt loop the token manager shares. */
  loop: AttemptLoop;
  /** The turns every attempt waits for: each client's share of the key's rate. */
  share: UpstreamShare;
  transport: Transport;
  /** Removes known secrets from upstream text before it is kept on an error. */
  scrub: (text: string) => string;
  routes?: ReadonlyMap<string, Operation>;
  userAgent?: string;
  /** Closed with the client: the replicas' shared cooldown. */
  cooldownBroadcast?: CooldownBroadcast;
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
  /** Sends the input as it is: a confirmed write, checked when it was drafted. */
  prevalidated?: boolean;
}

/** What a call carries besides its headers: path parameters, query, body. */
export function acceptOf(operation: Operation): string {
  if (operation.response === "xlsx") return XLSX_MIME;
  if (operation.response === "binary")
    return [
      ...(operation.contract?.responseTypes ?? []),
      "application/problem+json",
      "*/*;q=0.1",
    ].join(", ");
  return "application/json";
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
  body: string | Buffer | undefined;
  contentType: string | undefined;
  delegation: Record<string, string>;
}

/**
 * Calls Partner API operations by id: validates the input against the catalogue, sends it
 * with the token manager's bearer through the shared attempt loop, and turns every failure
 * into an ApiError.
 */
export class ApiClient {
  readonly tokens: TokenManager;
  readonly routes: ReadonlyMap<string, Operation>;

  constructor(private readonly deps: ApiClientDeps) {
    this.tokens = deps.tokens;
    this.routes = deps.routes ?? resolveRoutes(deps.settings.routesFile);
  }

  get settings(): ApiSettings {
    return this.deps.settings;
  }

  /** Retries made after failed attempts, token exchanges included. */
  get retries(): number {
    return this.deps.loop.retries;
  }

  /** The route in force for an operation (the contract's, or after PORTFOLIO_ROUTES_FILE). */
  operation(id: string): Operation {
    const operation = this.routes.get(id);
    if (!operation)
      throw new ApiError(
        `${id} is not offered: the key's contract does not list it (nothing was sent).`,
        { code: "not_offered", operationId: id },
      );
    return operation;
  }

  /** Whether the route table (the key's contract, when loaded) has this operation. */
  has(id: string): boolean {
    return this.routes.has(id);
  }

  /**
   * Checks an input as `send` would, and sends nothing: a write is checked when it is drafted,
   * so a person never approves what would be refused before it left.
   */
  validate(operation: Operation, input: CallInput, options: CallOptions = {}): void {
    this.prepare(operation, input, options);
  }

  /** A curated operation, its input typed by the catalogue. */
  call<Id extends OperationId>(
    id: Id,
    input: OperationInput<Id>,
    options: CallOptions = {},
  ): Promise<ApiResult> {
    return this.send(this.operation(id), input as CallInput, options);
  }

  /** Any operation of the route table, validated against its schemas before anything is sent. */
  async send(
    operation: Operation,
    input: CallInput,
    options: CallOptions = {},
  ): Promise<ApiResult> {
    const id = operation.id;
    const prepared = this.prepare(operation, input, options);
    const requestId = options.requestId ?? `pmcp-${randomUUID()}`;
    // Fixed once, before any retry: every attempt of this write carries the same key.
    const idempotencyKey =
      prepared.operation.method === "GET"
        ? undefined
        : (options.idempotencyKey ?? `pmcp-${randomUUID()}`);
    let bearer = "";
    let renewedAfter401 = false;
    const { reply, attempts } = await this.deps.loop.run({
      operationId: id,
      requestId,
      route: prepared.operation.path,
      upstream: this.settings.baseUrl,
      signal: options.signal,
      build: async () => {
        bearer = await this.tokens.get(options.signal);
        return {
          method: prepared.operation.method,
          url: prepared.url,
          headers: this.headers(prepared, bearer, requestId, idempotencyKey),
          body: prepared.body,
        };
      },
      // The bearer was refused (expired, revoked): exchange again, once, and resend.
      again: (answer) => {
        if (answer.status !== 401 || renewedAfter401) return false;
        renewedAfter401 = true;
        this.tokens.invalidate(bearer);
        return true;
      },
    });
    const unread = answerTooLarge(reply, {
      operationId: id,
      requestId,
      upstream: this.settings.baseUrl,
    });
    if (unread) throw unread;
    if (reply.status >= 200 && reply.status < 300) {
      return {
        status: reply.status,
        data: readSuccessBody(reply, prepared.operation.response, { operationId: id, requestId }),
        requestId,
        contentType: reply.headers["content-type"] ?? "",
        attempts,
      };
    }
    throw errorFromReply(
      reply,
      { operationId: id, requestId, upstream: this.settings.baseUrl },
      this.deps.scrub,
      Date.now(),
    );
  }

  async close(): Promise<void> {
    await this.deps.cooldownBroadcast?.close();
    await this.deps.transport.close();
  }

  /** The key's rate in force, requests a minute: the setting, lowered after 429s. */
  keyRatePerMinute(): number {
    return this.deps.share.keyPerMinute;
  }

  /** How long every call still waits for a 429 cooldown (this replica's or another's). */
  cooldownRemainingMs(): number {
    return this.deps.loop.cooldown.remainingMs();
  }

  /** Settles once this client follows the other replicas' rate-limit cooldowns (Redis only). */
  async sharedStateReady(): Promise<void> {
    await this.deps.cooldownBroadcast?.ready;
  }

  /** Validates and builds everything about the request that does not change between attempts. */
  private prepare(operation: Operation, input: CallInput, options: CallOptions): PreparedCall {
    const id = operation.id;
    const errors: FieldError[] = [];
    const parse = (
      schema: Operation["params"] | Operation["query"] | Operation["body"],
      value: unknown,
      what: string,
    ) => {
      if (options.prevalidated) return value;
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
        options.delegatedUser === undefined ? this.settings.delegatedUser : options.delegatedUser;
      if (!user) {
        throw new ApiError(
          `${id} acts for a user: set PORTFOLIO_DELEGATED_USER_EMAIL or PORTFOLIO_DELEGATED_USER_ID (nothing was sent).`,
          { code: "not_configured", operationId: id },
        );
      }
      delegation = delegationHeaders(this.settings.delegationHeaderPrefix, user);
    }
    const path = operation.path.replace(/\{([^{}]+)\}/g, (_, name: string) =>
      encodeURIComponent(String(params?.[name] ?? "")),
    );
    // The last word, whatever the route table says: never a URL off the API's base path.
    if (!staysUnderBase(this.settings.baseUrl, path))
      throw new ApiError(
        `${id} is not offered: its route ${operation.path} leaves the API's base path (nothing was sent).`,
        { code: "not_offered", operationId: id },
      );
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {}))
      for (const item of Array.isArray(value) ? value : [value])
        if (item !== undefined && item !== null) search.append(name, String(item));
    const qs = search.toString();
    const encoded =
      body === undefined
        ? undefined
        : operation.bodyType === "multipart"
          ? multipartBody(id, body)
          : { bytes: JSON.stringify(body), contentType: "application/json" };
    return {
      operation,
      url: `${this.settings.baseUrl}${path}${qs ? `?${qs}` : ""}`,
      body: encoded?.bytes,
      contentType: encoded?.contentType,
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
      accept: acceptOf(prepared.operation),
      authorization: `Bearer ${bearer}`,
      "x-request-id": requestId,
      "user-agent": this.deps.userAgent ?? "portfolio-mcp",
      ...(prepared.contentType === undefined ? {} : { "content-type": prepared.contentType }),
      ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
      ...prepared.delegation,
    };
  }
}

interface CallInput {
  path?: unknown;
  query?: unknown;
  body?: unknown;
}

export interface ApiClientOptions {
  settings: ApiSettings;
  logger: Logger;
  /** Scrubs the secret and every bearer from log lines and upstream text. */
  redactor?: SecretRedactor;
  routes?: ReadonlyMap<string, Operation>;
  transport?: Transport;
  clock?: () => number;
  sleep?: Sleep;
  random?: () => number;
  userAgent?: string;
  /** Told of every upstream attempt (status null: no answer) and its milliseconds, for metrics. */
  onAttempt?: (operation: string, status: number | null, ms: number) => void;
  /** Redis shared with other replicas: one bearer (and one renewal) for the fleet. */
  redis?: SharedRedis;
  /** Told of waits for a turn and of refusals, for metrics. */
  shareEvents?: ShareEvents;
}

const abortableSleep: Sleep = (ms, signal) => delay(ms, undefined, { signal });

/**
 * A client and what it runs on, wired once: one transport and one cooldown, one attempt loop
 * for the token exchange and business calls alike, and the token manager given to the client.
 */
export function connectApi(options: ApiClientOptions): ApiClient {
  const { settings } = options;
  const redactor = options.redactor ?? new SecretRedactor();
  redactor.add(settings.secret);
  const scrub = (text: string) => redactor.scrub(text);
  const clock = options.clock ?? Date.now;
  const transport =
    options.transport ??
    createTransport({
      timeoutMs: settings.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes,
    });
  const cooldown = new Cooldown(clock);
  const cooldownBroadcast = options.redis
    ? new CooldownBroadcast(options.redis, cooldown, settings, options.logger)
    : undefined;
  const limits = {
    perMinute: settings.rateLimitPerMinute,
    share: settings.sharePerClient,
    maxInFlight: settings.maxInFlightPerClient,
  };
  const share = new UpstreamShare(
    options.redis
      ? new RedisShareStore(
          options.redis,
          limits,
          settings,
          // An attempt ends within the transport's timeouts; its slot outlives it by a margin.
          2 * settings.timeoutMs + 10_000,
          options.logger,
          clock,
        )
      : new LocalShareStore(limits, clock),
    { ...limits, maxWaitMs: settings.maxRetryWaitSeconds * 1000 },
    clock,
    options.shareEvents,
  );
  const loop = new AttemptLoop({
    transport,
    cooldown,
    share,
    policy: { ...DEFAULT_RETRY_POLICY, maxRetries: settings.maxRetries },
    maxRetryWaitMs: settings.maxRetryWaitSeconds * 1000,
    logger: options.logger,
    clock,
    sleep: options.sleep ?? abortableSleep,
    random: options.random ?? Math.random,
    onAttempt: options.onAttempt,
  });
  const tokens = new TokenManager({
    baseUrl: settings.baseUrl,
    keyId: settings.keyId,
    secret: settings.secret,
    prefix: settings.tokenPrefix,
    loop,
    logger: options.logger,
    clock,
    onBearer: (token) => redactor.add(token),
    scrub,
    shared: options.redis ? new RedisBearerStore(options.redis, settings) : undefined,
  });
  return new ApiClient({
    settings,
    logger: options.logger,
    tokens,
    loop,
    share,
    transport,
    scrub,
    routes: options.routes,
    userAgent: options.userAgent,
    cooldownBroadcast,
  });
}
