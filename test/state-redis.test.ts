import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { connectRedis, REDIS_ANSWER_TIMEOUT_MS } from "../src/state/redis.js";
import { dropAndClose, testRedis } from "./helpers/redis.js";

const valid = {
  PORTFOLIO_API_BASE_URL: "https://partner.example.com/api/v1",
  PORTFOLIO_API_KEY_ID: "acme2026",
  PORTFOLIO_API_SECRET: "s3cret-value",
};
const load = (env: Record<string, string>) =>
  loadConfig({ env: env as NodeJS.ProcessEnv, platform: "linux", home: "/home/pm" });

describe("Redis settings", () => {
  const secret = { PORTFOLIO_STATE_SECRET: "x".repeat(32) };

  it("are off by default and take the default prefix when only the URL is set", () => {
    expect(load(valid).redis).toBeNull();
    expect(
      load({ ...valid, ...secret, PORTFOLIO_REDIS_URL: "rediss://u:pw@cache.example:6380/2" })
        .redis,
    ).toEqual({ url: "rediss://u:pw@cache.example:6380/2", prefix: "portfolio-mcp:" });
    expect(
      load({
        ...valid,
        ...secret,
        PORTFOLIO_REDIS_URL: "redis://127.0.0.1:6379",
        PORTFOLIO_REDIS_PREFIX: "team-a:",
      }).redis?.prefix,
    ).toBe("team-a:");
  });

  it("require the state secret every replica shares: it authenticates the writes they share", () => {
    const redis = { ...valid, PORTFOLIO_REDIS_URL: "redis://127.0.0.1:6379" };
    expect(() => load(redis)).toThrow(
      "PORTFOLIO_STATE_SECRET: required with PORTFOLIO_REDIS_URL, the same on every replica",
    );
    expect(load({ ...redis, ...secret }).warnings).toEqual([]);
    expect(load(valid).warnings).toEqual([]);
  });

  it("refuse a wrong URL or prefix by name and rule, without echoing the value", () => {
    const wrong = () => load({ ...valid, PORTFOLIO_REDIS_URL: "http://u:hunter2@cache:6379" });
    expect(wrong).toThrow(ConfigError);
    expect(wrong).toThrow("PORTFOLIO_REDIS_URL: must be a redis:// or rediss:// URL");
    expect(wrong).not.toThrow(/hunter2/);
    expect(() =>
      load({
        ...valid,
        ...secret,
        PORTFOLIO_REDIS_URL: "redis://x",
        PORTFOLIO_REDIS_PREFIX: "a b",
      }),
    ).toThrow("PORTFOLIO_REDIS_PREFIX: must be 1 to 64 of letters, digits, : _ . -");
  });
});

describe("the Redis connection", () => {
  const opened: Array<Awaited<ReturnType<typeof testRedis>>> = [];
  afterAll(async () => {
    for (const redis of opened) await dropAndClose(redis);
  });

  it("prefixes every key it names", async () => {
    const redis = await testRedis("state");
    opened.push(redis);
    expect(await redis.client.ping()).toBe("PONG");
    await redis.client.set(redis.key("probe"), "1");
    expect(await redis.client.get(`${redis.prefix}probe`)).toBe("1");
  });

  it("takes an answer that came while the process was too busy to read it within the bound", async () => {
    const redis = await testRedis("busy");
    opened.push(redis);
    const answer = redis.run((client) => client.ping(), "ping");
    // node-redis writes in a setImmediate: once ours (queued after it) has run, the command is
    // on the wire and answered at once, but nothing is read until the next poll phase. The
    // process then reads nothing until past the bound: the timer and the answer are both due.
    await new Promise((resolve) => setImmediate(resolve));
    const until = Date.now() + REDIS_ANSWER_TIMEOUT_MS + 300;
    while (Date.now() < until);
    await expect(answer).resolves.toBe("PONG");
  });

  it("names the variable, never the password, when Redis cannot be reached", async () => {
    const attempt = connectRedis({ url: "redis://:hunter2@127.0.0.1:1/0", prefix: "x:" });
    await expect(attempt).rejects.toThrow(/^PORTFOLIO_REDIS_URL: cannot connect to Redis/);
    await expect(attempt).rejects.not.toThrow(/hunter2/);
  });
});
