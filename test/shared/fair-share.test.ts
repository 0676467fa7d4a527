import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { burstAndNeighbour, type FairShareReport } from "../../bench/lib/fair-share.mjs";
import { DEMO_USERS, type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { connectRedis } from "../../src/state/redis.js";
import { REDIS_URL } from "../helpers/redis.js";
import { type ClientEntry, startShared } from "../helpers/shared.js";

/**
 * Issue 22, "fair use of the one key", measured as the issue states it: 100 concurrent
 * all_pages walks from one client (800 upstream requests) while another client makes one read
 * a second. The neighbour's reads all succeed with p99 under 2 s and the API sees no 429;
 * the walker is slowed to its share, or refused with one sentence. Each server runs with the
 * default limits (600 requests a minute for the key, half of it per client); the walks' longest
 * wait is 15 s rather than 30, to keep the run short.
 */
const burster: ClientEntry = {
  name: "burster",
  token: "fair-share-token-burster-0123456789",
  delegated_user: { email: "camille.martin@aurore-capital.example" },
};
const neighbour: ClientEntry = {
  name: "neighbour",
  token: "fair-share-token-neighbour-0123456789",
  delegated_user: { id: DEMO_USERS.thomas },
};
const SETTINGS = { PORTFOLIO_MAX_RETRY_WAIT_SECONDS: "15", PORTFOLIO_LOG_LEVEL: "error" };
const stops: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

function expectFair(report: FairShareReport) {
  const shown = JSON.stringify(report, null, 2);
  // The neighbour: every read answered, quickly.
  expect(report.neighbour.failures, shown).toEqual([]);
  expect(report.neighbour.reads, shown).toBeGreaterThanOrEqual(10);
  expect(report.neighbour.p99_ms, shown).toBeLessThan(2_000);
  // The API: never throttled.
  expect(report.upstream.answered_429, shown).toBe(0);
  // The walker: each walk answered, or refused with the sentence saying when to retry.
  expect(report.burst.other_failures, shown).toEqual([]);
  expect(report.burst.answered, shown).toBeGreaterThan(0);
  expect(report.burst.answered + report.burst.refused_with_the_sentence, shown).toBe(100);
  // Held to its share (600 a minute, 50 %: 5 a second, after a burst of 5), network jitter
  // of the arrivals aside: a walker counted alone on each of two replicas would send 20.
  expect(report.upstream.walk_requests_in_busiest_second, shown).toBeLessThanOrEqual(12);
}

describe("one client's 100 concurrent all_pages walks and another client's reads", () => {
  it("on one server, against the sandbox's own limits", async () => {
    const sandbox = await startSandbox(); // 300 at once, 100 a second, a ban after 20 strikes
    stops.push(() => sandbox.close());
    const server = await startShared(sandbox, [burster, neighbour], SETTINGS);
    stops.push(() => server.stop());
    const report = await burstAndNeighbour({
      burst: { urls: [server.url], token: burster.token },
      neighbour: { url: server.url, token: neighbour.token },
      control: sandbox.control,
    });
    expectFair(report);
  }, 120_000);

  it("across two replicas on Redis, against an API that allows exactly the key's rate", async () => {
    // The key's real limit is what PORTFOLIO_API_RATE_LIMIT_PER_MINUTE says (600 a minute):
    // only a share counted across the fleet keeps the two replicas under it.
    const sandbox: Sandbox = await startSandbox({ rateLimit: { burst: 10, perSecond: 10 } });
    stops.push(() => sandbox.close());
    const prefix = `pmcp-test:fair-share:${randomBytes(4).toString("hex")}:`;
    stops.push(async () => {
      const redis = await connectRedis({ url: REDIS_URL, prefix });
      for await (const keys of redis.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 }))
        if (keys.length > 0) await redis.client.del(keys);
      await redis.close();
    });
    const replicas = await Promise.all(
      [0, 1].map(() =>
        startShared(sandbox, [burster, neighbour], {
          ...SETTINGS,
          PORTFOLIO_REDIS_URL: REDIS_URL,
          PORTFOLIO_REDIS_PREFIX: prefix,
        }),
      ),
    );
    for (const replica of replicas) stops.push(() => replica.stop());
    const report = await burstAndNeighbour({
      burst: { urls: replicas.map((r) => r.url), token: burster.token },
      neighbour: { url: replicas[1]!.url, token: neighbour.token },
      control: sandbox.control,
    });
    expectFair(report);
  }, 120_000);
});
