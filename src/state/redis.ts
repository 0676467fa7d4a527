import { ClientClosedError, ClientOfflineError, createClient, ErrorReply } from "redis";
import type { RedisSettings } from "../config.js";
import type { Logger } from "../log.js";
import { traced } from "../telemetry/tracing.js";
import { REDIS_ANSWER_TIMEOUT_MS, StoreUnavailable } from "./unavailable.js";

export { REDIS_ANSWER_TIMEOUT_MS, StoreUnavailable };

export type RedisClient = ReturnType<typeof createClient>;

/**
 * One connection to the Redis several replicas share, and the key prefix that keeps this
 * deployment's keys apart from any other's on the same Redis.
 */
export interface SharedRedis {
  readonly client: RedisClient;
  readonly prefix: string;
  /** host:port, for messages: the URL itself may hold a password. */
  readonly where: string;
  /** `<prefix><name>`: every key this server touches goes through here. */
  key(name: string): string;
  /**
   * Runs commands with an answer due within REDIS_ANSWER_TIMEOUT_MS; any failure to answer
   * becomes a StoreUnavailable. A command that times out may still have run on the server:
   * callers treat its effect as unknown, never as "not done". `what` names the round trip in
   * its span (a child of the request that caused it, when tracing is on).
   */
  run<T>(work: (client: RedisClient) => Promise<T>, what?: string): Promise<T>;
  close(): Promise<void>;
}

/**
 * Connects from the URL (TLS with rediss://, user and password in it). The URL is never logged
 * or put in an error: it may hold the password.
 */
export async function connectRedis(settings: RedisSettings, logger?: Logger): Promise<SharedRedis> {
  const client = redisClient(settings, logger);
  try {
    await client.connect();
  } catch (error) {
    client.destroy();
    throw new Error(
      `PORTFOLIO_REDIS_URL: cannot connect to Redis (${problemOf(error, settings.url)})`,
    );
  }
  const where = hostAndPort(settings.url);
  return {
    client,
    prefix: settings.prefix,
    where,
    key: (name) => `${settings.prefix}${name}`,
    run: (work, what = "command") =>
      traced(
        `redis ${what}`,
        {
          kind: "client",
          childOnly: true,
          attributes: {
            "db.system.name": "redis",
            "db.operation.name": what,
            "server.address": where,
          },
        },
        () => bounded(work(client), where),
      ),
    close: async () => {
      if (client.isOpen) await client.close();
    },
  };
}

/**
 * A client that fails fast: a few tries at startup, then an error; once connected, it keeps
 * reconnecting, and logs each new problem once.
 */
function redisClient(settings: RedisSettings, logger?: Logger): RedisClient {
  let everReady = false;
  const client: RedisClient = createClient({
    url: settings.url,
    // While reconnecting, a command fails at once instead of waiting in a queue for a server
    // that may not come back: the tool call that needs it says so now.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 5_000,
      // At startup, a few tries then a clear error. Once connected, keep trying (a Redis restart
      // must not stop a replica); a call made meanwhile fails and its caller decides.
      reconnectStrategy: (retries, cause) =>
        !everReady && retries >= 3 ? cause : Math.min(50 * 2 ** retries, 2_000),
    },
  });
  // Without a listener an 'error' event would end the process; one line per failure is enough.
  let lastError = "";
  client.on("error", (error: unknown) => {
    const message = problemOf(error, settings.url);
    if (message === lastError) return;
    lastError = message;
    logger?.warn({ problem: message }, "Redis connection problem; retrying");
  });
  client.on("ready", () => {
    everReady = true;
    if (lastError) logger?.info("Redis connection restored");
    lastError = "";
  });
  return client;
}

/** A connection error in words, without the URL (it may carry the password). */
function problemOf(error: unknown, url: string): string {
  return withoutUrl(error instanceof Error ? error.message : String(error), url);
}

/** The work's answer, or a StoreUnavailable when Redis fails or stays silent too long. */
async function bounded<T>(work: Promise<T>, where: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_, reject) => {
    // After a stall of the event loop, due timers run before the socket is read: the answer
    // that came meanwhile is read first (I/O callbacks run before setImmediate's), so a busy
    // process never takes a store that answered for one that did not.
    timer = setTimeout(
      () => setImmediate(() => reject(new StoreUnavailable(where, null, true))),
      REDIS_ANSWER_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([work, silence]);
  } catch (error) {
    if (error instanceof StoreUnavailable) throw error;
    const neverSent = error instanceof ClientOfflineError || error instanceof ClientClosedError;
    const refusal = refusalOf(error);
    throw new StoreUnavailable(where, refusal, !neverSent && refusal === null);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Redis's own refusal (an error reply: OOM, MISCONF, READONLY …), first line only; null for a
 * connection that failed, closed or went offline.
 */
function refusalOf(error: unknown): string | null {
  if (!(error instanceof ErrorReply)) return null;
  return error.message.split("\n")[0]?.slice(0, 200) ?? null;
}

/** "host:port" of a redis:// URL, for messages. */
export function hostAndPort(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "6379"}`;
  } catch {
    return "the configured address";
  }
}

/** A message with the URL (and so any password in it) taken out. */
function withoutUrl(message: string, url: string): string {
  let out = message.split(url).join("<PORTFOLIO_REDIS_URL>");
  try {
    const password = new URL(url).password;
    if (password) out = out.split(decodeURIComponent(password)).join("***");
  } catch {
    // Validated by the configuration already.
  }
  return out;
}
