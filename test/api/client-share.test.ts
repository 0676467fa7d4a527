import type { RequestLogEntry, Sandbox } from "@portfolio-mcp/sandbox";
import { startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import { ApiError } from "../../src/http/errors.js";
import { asPrincipal } from "../../src/http/principal.js";
import type { SharedRedis } from "../../src/state/redis.js";
import { clientFor } from "../helpers/api.js";
import { dropAndClose, testRedis } from "../helpers/redis.js";

/** Each client's share of the key, seen from the API: the sandbox's request log. */
let sandbox: Sandbox;
let redis: SharedRedis;
beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await testRedis("client-share");
});
afterAll(async () => {
  await dropAndClose(redis);
  await sandbox.close();
});

const READ = "notifications_unread_count";
const read = (api: ApiClient, principal: string) =>
  asPrincipal(principal, () => api.call(READ, {}));

/** The most requests the API was answering at once (each held by a delay fault). */
function mostAtOnce(entries: RequestLogEntry[]): number {
  // A request's span at the API, a few ms shaved off each end: `at` is ms-rounded.
  const spans = entries.map((e) => [Date.parse(e.at) + 5, Date.parse(e.at) + e.durationMs - 5]);
  return Math.max(
    ...spans.map(([start]) => spans.filter(([s, e]) => s! <= start! && start! < e!).length),
  );
}

describe("each client's upstream requests in flight", () => {
  it("are bounded in one process: the rest wait their turn, and all succeed", async () => {
    const { api } = clientFor(sandbox, { maxInFlightPerClient: 2, sharePerClient: 1 });
    try {
      await read(api, "p"); // signed in
      const mark = sandbox.control.mark();
      sandbox.control.delay(300, { count: 6, match: { routeId: READ } });
      const results = await Promise.all(Array.from({ length: 6 }, () => read(api, "p")));
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(mostAtOnce(sandbox.control.requests({ since: mark, routeId: READ }))).toBe(2);
    } finally {
      await api.close();
    }
  });

  it("are bounded across replicas on Redis", async () => {
    const replicas = [0, 1].map(() =>
      clientFor(sandbox, { maxInFlightPerClient: 2, sharePerClient: 1 }, { redis }),
    );
    try {
      for (const { api } of replicas) await read(api, "fleet");
      const mark = sandbox.control.mark();
      sandbox.control.delay(300, { count: 6, match: { routeId: READ } });
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, n) => read(replicas[n % 2]!.api, "fleet")),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(mostAtOnce(sandbox.control.requests({ since: mark, routeId: READ }))).toBe(2);
    } finally {
      for (const { api } of replicas) await api.close();
    }
  });
});

describe("a 429", () => {
  it("slows the client whose request drew it first, and the key's rate a little", async () => {
    // No waiting at all: a turn is given at once or refused, so bursts show the rates; and
    // once the cooldown is over the server's clock stands still, so they show them exactly.
    let frozen: number | null = null;
    const { api } = clientFor(
      sandbox,
      { maxRetryWaitSeconds: 0 },
      { clock: () => frozen ?? Date.now() },
    );
    try {
      await read(api, "server-warmup");
      sandbox.control.rateLimitNext(1, 1, { routeId: READ });
      const drew = await read(api, "http:a").catch((error: unknown) => error);
      // Its retry would wait the 1 s cooldown, longer than the 0 s allowed: refused.
      expect(drew).toBeInstanceOf(ApiError);
      expect(api.keyRatePerMinute()).toBe(480);
      frozen = Date.now() + 1_100; // the cooldown is over
      // One read after another: each finds its client's queue empty, so it goes or is refused.
      const burst = async (principal: string) => {
        let granted = 0;
        for (let n = 0; n < 8; n++)
          granted += await read(api, principal).then(
            () => 1,
            () => 0,
          );
        return granted;
      };
      // At 480 a minute, half each: a neighbour's burst is one second of its share, 4; the
      // client that drew the 429 has its share halved again: 2.
      expect(await burst("http:a")).toBe(2);
      expect(await burst("http:b")).toBe(4);
    } finally {
      await api.close();
    }
  });

  it("lowers the key's rate for every replica on Redis", async () => {
    const [one, two] = [0, 1].map(() => clientFor(sandbox, {}, { redis }));
    try {
      await read(one!.api, "x");
      await read(two!.api, "x");
      sandbox.control.rateLimitNext(1, 1, { routeId: READ });
      await read(one!.api, "http:a"); // 429, then its retry after the cooldown
      await read(two!.api, "http:b");
      // 600 lowered by a fifth, a fraction of a request a minute already recovered.
      expect(two!.api.keyRatePerMinute()).toBeGreaterThanOrEqual(480);
      expect(two!.api.keyRatePerMinute()).toBeLessThan(490);
    } finally {
      await one!.api.close();
      await two!.api.close();
    }
  });
});
