import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SharedRedis } from "../../src/state/redis.js";
import { LocalRateLimiter, RedisRateLimiter } from "../../src/transport/rate-limit.js";
import { capturedLogger } from "../helpers/api.js";
import { dropAndClose, testRedis } from "../helpers/redis.js";

let redis: SharedRedis;
beforeAll(async () => {
  redis = await testRedis("rate");
});
afterAll(async () => {
  await dropAndClose(redis);
});

describe("the per-client rate on Redis", () => {
  it("counts one client's requests across replicas, and each client apart", async () => {
    const { logger } = capturedLogger();
    const [one, two] = [
      new RedisRateLimiter(redis, 10, logger),
      new RedisRateLimiter(redis, 10, logger),
    ];
    const waits = [];
    for (let n = 0; n < 10; n++) waits.push(await (n % 2 ? one : two).take("camille", 1));
    expect(waits).toEqual(Array(10).fill(0));
    // The minute's allowance is spent across both: the next waits about a tenth of a minute.
    const wait = await one.take("camille", 1);
    expect(wait).toBeGreaterThan(5_000);
    expect(wait).toBeLessThanOrEqual(6_000);
    expect(await two.take("julien", 1)).toBe(0);
    // Keys name no client.
    const keys: string[] = [];
    for await (const batch of redis.client.scanIterator({ MATCH: `${redis.prefix}*` }))
      keys.push(...batch);
    expect(keys.join(" ")).not.toMatch(/camille|julien/);
  });

  it("counts alone, with one warning, when Redis cannot answer", async () => {
    const logs = capturedLogger();
    const closed = await testRedis("rate-closed");
    await closed.close();
    const limiter = new RedisRateLimiter(closed, 2, logs.logger);
    expect([await limiter.take("c", 1), await limiter.take("c", 1)]).toEqual([0, 0]);
    expect(await limiter.take("c", 1)).toBeGreaterThan(0);
    expect(logs.lines.filter((l) => l.includes("counts alone"))).toHaveLength(1);
  });

  it("in one process, is the same bucket as before", async () => {
    let now = 0;
    const local = new LocalRateLimiter(60, () => now);
    expect(await local.take("c", 60)).toBe(0);
    expect(await local.take("c", 1)).toBe(1_000);
    now += 1_000;
    expect(await local.take("c", 1)).toBe(0);
  });
});
