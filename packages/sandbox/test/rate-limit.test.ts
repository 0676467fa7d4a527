import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { DEMO_KEYS, startSandbox } from "../src/index.js";
import { PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: each test spends the budget of a key of its own.
const env = sharedSandbox({
  rateLimit: { burst: 3, perSecond: 1, banAfterStrikes: 4, banSeconds: 6 },
});

describe("rate limiting per key", () => {
  it("answers 429 with Retry-After in seconds once the burst is spent, then recovers", async () => {
    const client = PartnerTestClient.for(env.sandbox);
    await client.token();
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await client.get("/taxonomies")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await client.get("/taxonomies").catch(() => null);
    expect(limited?.status).toBe(429);
    expect(limited?.body.reason_code).toBe("rate_limit_exceeded");
    const retryAfter = Number(limited?.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);

    // A different key has its own bucket.
    const other = PartnerTestClient.for(env.sandbox, DEMO_KEYS.readOnly);
    expect((await other.get("/taxonomies")).status).toBe(200);

    await sleep(retryAfter * 1000 + 100);
    expect((await client.get("/taxonomies")).status).toBe(200);
  });

  it("turns requests sent during the cooldown into a longer ban", async () => {
    const client = PartnerTestClient.for(env.sandbox, DEMO_KEYS.limited);
    await client.token();
    const replies = [];
    for (let i = 0; i < 9; i++)
      replies.push(await client.get("/operations", { query: { limit: 1 } }));
    const last = replies.at(-1)!;
    expect(last.status).toBe(429);
    expect(last.body.reason_code).toBe("rate_limit_ban");
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThanOrEqual(5);
  });
});

describe("with rate limiting off", () => {
  it("lets a burst through", async () => {
    const open = await startSandbox({ rateLimit: false });
    try {
      const client = PartnerTestClient.for(open);
      await client.token();
      const replies = await Promise.all(
        Array.from({ length: 400 }, () => client.get("/notifications/unread-count")),
      );
      expect(replies.every((r) => r.status === 200)).toBe(true);
    } finally {
      await open.close();
    }
  });
});
