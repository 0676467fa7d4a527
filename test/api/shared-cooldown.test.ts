import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SharedRedis } from "../../src/state/redis.js";
import { clientFor } from "../helpers/api.js";
import { dropAndClose, testRedis } from "../helpers/redis.js";

let sandbox: Sandbox;
let redis: SharedRedis;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  redis = await testRedis("cooldown");
});
afterAll(async () => {
  await dropAndClose(redis);
  await sandbox.close();
});

const READ = "notifications_unread_count";

describe("the 429 cooldown shared on Redis", () => {
  it("keeps the other replica from calling until Retry-After has passed", async () => {
    const one = clientFor(sandbox, {}, { redis });
    const two = clientFor(sandbox, {}, { redis });
    try {
      await Promise.all([one.api.sharedStateReady(), two.api.sharedStateReady()]);
      await Promise.all([one.api.call(READ, {}), two.api.call(READ, {})]); // both signed in
      sandbox.control.rateLimitNext(1, 2, { routeId: READ });
      const started = Date.now();
      const first = one.api.call(READ, {}); // 429, Retry-After: 2, then waits and retries
      // The announcement arrives (waited for, not assumed within a fixed time: on a loaded
      // machine pub/sub can take longer than any guess).
      while (two.api.cooldownRemainingMs() === 0)
        await new Promise((resolve) => setTimeout(resolve, 10));
      const mark = sandbox.control.mark();
      const other = await two.api.call(READ, {});
      expect(other.status).toBe(200);
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(1_900);
      // Nothing reached the API from either replica while the cooldown lasted.
      const during = sandbox.control
        .requests({ since: mark, routeId: READ })
        .filter((r) => Date.parse(r.at) < started + 1_900);
      expect(during).toEqual([]);
      expect((await first).status).toBe(200);
    } finally {
      await one.api.close();
      await two.api.close();
    }
  });

  it("is taken up by a replica that starts while it lasts", async () => {
    const one = clientFor(sandbox, { maxRetryWaitSeconds: 5 }, { redis });
    try {
      await one.api.sharedStateReady();
      await one.api.call(READ, {});
      sandbox.control.rateLimitNext(1, 30, { routeId: READ });
      await expect(one.api.call(READ, {})).rejects.toMatchObject({ code: "rate_limited" });
      const late = clientFor(sandbox, { maxRetryWaitSeconds: 5 }, { redis });
      try {
        await late.api.sharedStateReady();
        const mark = sandbox.control.mark();
        await expect(late.api.call(READ, {})).rejects.toMatchObject({ code: "rate_limited" });
        expect(sandbox.control.requests({ since: mark, routeId: READ })).toEqual([]);
      } finally {
        await late.api.close();
      }
    } finally {
      await one.api.close();
    }
  });
});
