import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerKey, openBearer, sealBearer } from "../../src/auth/bearer-seal.js";
import { RedisBearerStore } from "../../src/auth/shared-bearer.js";
import type { SharedRedis } from "../../src/state/redis.js";
import { clientFor, SHARE_RAISED } from "../helpers/api.js";
import { dropAndClose, testRedis } from "../helpers/redis.js";

let sandbox: Sandbox;
let redis: SharedRedis;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  redis = await testRedis("bearer");
});
afterAll(async () => {
  await dropAndClose(redis);
  await sandbox.close();
});

const exchanges = (since: number) =>
  sandbox.control.requests({ since, routeId: "auth_token" }).length;

/**
 * Two replicas: each its own ApiClient and TokenManager, one Redis between them (the client's
 * share of the key raised: hundreds of calls at once are what is tested).
 */
function replicas() {
  const one = clientFor(sandbox, SHARE_RAISED, { redis });
  const two = clientFor(sandbox, SHARE_RAISED, { redis });
  return {
    apis: [one.api, two.api],
    logs: () => one.logs.text() + two.logs.text(),
    close: async () => {
      await one.api.close();
      await two.api.close();
    },
  };
}

describe("the bearer shared on Redis", () => {
  it("costs one exchange for 200 concurrent cold calls across two replicas, and one more after expiry", async () => {
    await dropStoredBearers();
    const fleet = replicas();
    try {
      const mark = sandbox.control.mark();
      await Promise.all(
        Array.from({ length: 200 }, (_, n) =>
          fleet.apis[n % 2]!.call("notifications_unread_count", {}),
        ),
      );
      expect(exchanges(mark)).toBe(1);

      // The API expires every bearer: each replica gets 401s, and still one exchange in all.
      sandbox.control.expireAllBearers();
      const after = sandbox.control.mark();
      await Promise.all(
        Array.from({ length: 100 }, (_, n) =>
          fleet.apis[n % 2]!.call("notifications_unread_count", {}),
        ),
      );
      expect(exchanges(after)).toBe(1);
    } finally {
      await fleet.close();
    }
  });

  it("is stored encrypted: neither the bearer nor the secret is readable in Redis", async () => {
    await dropStoredBearers();
    const fleet = replicas();
    try {
      await fleet.apis[0]!.call("notifications_unread_count", {});
      const keys: string[] = [];
      for await (const batch of redis.client.scanIterator({ MATCH: `${redis.prefix}bearer:*` }))
        keys.push(...batch);
      expect(keys).toHaveLength(1);
      const stored = (await redis.client.get(keys[0]!)) as string;
      const bearer = sandbox.control
        .requests({ routeId: "notifications_unread_count" })
        .at(-1)
        ?.headers.authorization?.replace(/^Bearer /, "");
      expect(bearer).toBeTruthy();
      expect(stored).not.toContain(bearer!);
      expect(stored).not.toContain(sandbox.credentials.secret);
      expect(fleet.logs()).not.toContain(bearer!);
    } finally {
      await fleet.close();
    }
  });

  it("has a renewal lock whose lease frees it from a dead holder, and fences the late one out", async () => {
    const identity = { baseUrl: "http://lock.example/v1", keyId: "lockkey", secret: "s" };
    const dead = new RedisBearerStore(redis, identity, 200);
    const alive = new RedisBearerStore(redis, identity, 200);
    const first = await dead.lock();
    expect(first).not.toBeNull();
    expect(await alive.lock()).toBeNull(); // held: wait for its bearer
    await new Promise((resolve) => setTimeout(resolve, 250));
    const second = await alive.lock(); // the lease ran out
    expect(second!.fence).toBeGreaterThan(first!.fence);
    const bearer = (token: string) => ({
      token,
      expiresAtMs: Date.now() + 60_000,
      renewAtMs: Date.now() + 50_000,
    });
    expect(await dead.publish(bearer("late"), first!)).toBe(false);
    expect(await alive.publish(bearer("fresh"), second!)).toBe(true);
    expect((await dead.read())?.token).toBe("fresh");
    await dead.drop("late"); // not the stored one: nothing dropped
    expect((await alive.read())?.token).toBe("fresh");
    await dead.drop("fresh");
    expect(await alive.read()).toBeNull();
    await alive.unlock(second!);
  });

  it("opens only with the key of the same secret, API and key id", () => {
    const key = bearerKey("secret-1", "http://a/v1", "k1");
    const sealed = sealBearer(key, "tok", "ctx");
    expect(openBearer(key, sealed, "ctx")).toBe("tok");
    expect(openBearer(bearerKey("secret-2", "http://a/v1", "k1"), sealed, "ctx")).toBeNull();
    expect(openBearer(bearerKey("secret-1", "http://b/v1", "k1"), sealed, "ctx")).toBeNull();
    expect(openBearer(key, sealed, "other")).toBeNull();
    expect(openBearer(key, "garbage", "ctx")).toBeNull();
  });

  it("keeps serving when Redis holds a bearer of another secret (it is ignored, not trusted)", async () => {
    await dropStoredBearers();
    const other = clientFor(sandbox, {}, { redis });
    await other.api.call("notifications_unread_count", {});
    await other.api.close();
    for await (const batch of redis.client.scanIterator({ MATCH: `${redis.prefix}bearer:*` }))
      for (const key of batch) await redis.client.set(key, "not-a-sealed-bearer");
    const fleet = replicas();
    try {
      const mark = sandbox.control.mark();
      await Promise.all(fleet.apis.map((api) => api.call("notifications_unread_count", {})));
      expect(exchanges(mark)).toBe(1);
    } finally {
      await fleet.close();
    }
  });
});

async function dropStoredBearers(): Promise<void> {
  for await (const batch of redis.client.scanIterator({ MATCH: `${redis.prefix}bearer*` }))
    if (batch.length > 0) await redis.client.del(batch);
}
