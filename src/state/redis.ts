import { createClient } from "redis";
import type { RedisSettings } from "../config.js";
import type { Logger } from "../log.js";

export type RedisClient = ReturnType<typeof createClient>;

/**
 * One connection to the Redis several replicas share, and the key prefix that keeps this
 * deployment's keys apart from any other's on the same Redis.
 */
export interface SharedRedis {
  readonly client: RedisClient;
  readonly prefix: string;
  /** `<prefix><name>`: every key this server touches goes through here. */
  key(name: string): string;
  close(): Promise<void>;
}

/**
 * Connects from the URL (TLS with rediss://, user and password in it). The URL is never logged
 * or put in an error: it may hold the password.
 */
export async function connectRedis(settings: RedisSettings, logger?: Logger): Promise<SharedRedis> {
  let everReady = false;
  const client: RedisClient = createClient({
    url: settings.url,
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
    const message = withoutUrl(
      error instanceof Error ? error.message : String(error),
      settings.url,
    );
    if (message === lastError) return;
    lastError = message;
    logger?.warn({ problem: message }, "Redis connection problem; retrying");
  });
  client.on("ready", () => {
    everReady = true;
    if (lastError) logger?.info("Redis connection restored");
    lastError = "";
  });
  try {
    await client.connect();
  } catch (error) {
    client.destroy();
    const message = withoutUrl(
      error instanceof Error ? error.message : String(error),
      settings.url,
    );
    throw new Error(`PORTFOLIO_REDIS_URL: cannot connect to Redis (${message})`);
  }
  return {
    client,
    prefix: settings.prefix,
    key: (name) => `${settings.prefix}${name}`,
    close: async () => {
      if (client.isOpen) await client.close();
    },
  };
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
