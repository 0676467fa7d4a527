import { randomUUID } from "node:crypto";
import { RedisBearerStore } from "../auth/shared-bearer.js";
import { TokenManager } from "../auth/token-manager.js";
import type { ApiSettings } from "../config.js";
import type { Attempted, AttemptLoop } from "../http/attempts.js";
import { ApiError, answerTooLarge, errorFromReply } from "../http/errors.js";
import type { CooldownBroadcast } from "../http/shared-cooldown.js";
import type { HttpReply, Transport } from "../http/transport.js";
import type { UpstreamShare } from "../http/upstream-share.js";
import { type Logger, SecretRedactor } from "../log.js";
import type { Operation, OperationId, OperationInput } from "./catalogue.js";
import {
  type CallInput,
  type CallOptions,
  type PreparedCall,
  prepareCall,
  requestHeaders,
} from "./request.js";
import { readSuccessBody } from "./response.js";
import { resolveRoutes } from "./routes.js";
import { connectUpstream, type UpstreamOptions } from "./upstream.js";

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

export interface ApiResult<T = unknown> {
  status: number;
  data: T;
  requestId: string;
  contentType: string;
  /** How many HTTP attempts the call took, renewals and retries included. */
  attempts: number;
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
    prepareCall(this.settings, operation, input, options);
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
    const prepared = prepareCall(this.settings, operation, input, options);
    const requestId = options.requestId ?? `pmcp-${randomUUID()}`;
    // Fixed once, before any retry: every attempt of this write carries the same key.
    const idempotencyKey =
      operation.method === "GET" ? undefined : (options.idempotencyKey ?? `pmcp-${randomUUID()}`);
    const { reply, attempts } = await this.attempt(
      prepared,
      requestId,
      idempotencyKey,
      options.signal,
    );
    return this.resultOf(reply, attempts, operation, requestId);
  }

  /** One call's attempts, each with the bearer in force; a refused bearer is renewed once. */
  private attempt(
    prepared: PreparedCall,
    requestId: string,
    idempotencyKey: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Attempted> {
    let bearer = "";
    let renewedAfter401 = false;
    const userAgent = this.deps.userAgent ?? "portfolio-mcp";
    return this.deps.loop.run({
      operationId: prepared.operation.id,
      requestId,
      route: prepared.operation.path,
      upstream: this.settings.baseUrl,
      signal,
      build: async () => {
        bearer = await this.tokens.get(signal);
        return {
          method: prepared.operation.method,
          url: prepared.url,
          headers: requestHeaders(prepared, bearer, requestId, idempotencyKey, userAgent),
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
  }

  /** The call's result from its last answer, or the ApiError that answer makes. */
  private resultOf(
    reply: HttpReply,
    attempts: number,
    operation: Operation,
    requestId: string,
  ): ApiResult {
    const where = { operationId: operation.id, requestId, upstream: this.settings.baseUrl };
    const unread = answerTooLarge(reply, where);
    if (unread) throw unread;
    if (reply.status >= 200 && reply.status < 300) {
      return {
        status: reply.status,
        data: readSuccessBody(reply, operation.response, { operationId: operation.id, requestId }),
        requestId,
        contentType: reply.headers["content-type"] ?? "",
        attempts,
      };
    }
    throw errorFromReply(reply, where, this.deps.scrub, Date.now());
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
}

export interface ApiClientOptions extends UpstreamOptions {
  /** Scrubs the secret and every bearer from log lines and upstream text. */
  redactor?: SecretRedactor;
  routes?: ReadonlyMap<string, Operation>;
  userAgent?: string;
}

/**
 * A client and what it runs on, wired once: one attempt loop for the token exchange and
 * business calls alike, and the token manager given to the client.
 */
export function connectApi(options: ApiClientOptions): ApiClient {
  const { settings } = options;
  const redactor = options.redactor ?? new SecretRedactor();
  redactor.add(settings.secret);
  const scrub = (text: string) => redactor.scrub(text);
  const upstream = connectUpstream(options);
  const tokens = new TokenManager({
    baseUrl: settings.baseUrl,
    keyId: settings.keyId,
    secret: settings.secret,
    prefix: settings.tokenPrefix,
    loop: upstream.loop,
    logger: options.logger,
    clock: options.clock ?? Date.now,
    onBearer: (token) => redactor.add(token),
    scrub,
    shared: options.redis ? new RedisBearerStore(options.redis, settings) : undefined,
  });
  return new ApiClient({
    ...upstream,
    settings,
    logger: options.logger,
    tokens,
    scrub,
    routes: options.routes,
    userAgent: options.userAgent,
  });
}
