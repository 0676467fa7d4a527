import { randomBytes } from "node:crypto";
import { connectRedis, type SharedRedis } from "../../src/state/redis.js";

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379/0";

/** A connection with a prefix of its own, so test files never see each other's keys. */
export async function testRedis(label: string): Promise<SharedRedis> {
  const prefix = `pmcp-test:${label}:${randomBytes(4).toString("hex")}:`;
  return connectRedis({ url: REDIS_URL, prefix });
}

/** Deletes every key under the connection's prefix, then closes it. */
export async function dropAndClose(redis: SharedRedis): Promise<void> {
  const keys: string[] = [];
  for await (const batch of redis.client.scanIterator({ MATCH: `${redis.prefix}*`, COUNT: 500 }))
    keys.push(...batch);
  if (keys.length > 0) await redis.client.del(keys);
  await redis.close();
}
