import { setTimeout as sleep } from "node:timers/promises";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import { ApiError } from "../../src/http/errors.js";
import { clientFor, SHARE_RAISED } from "../helpers/api.js";

let sandbox: Sandbox;
const clients: ApiClient[] = [];
const client = (
  ...args: Parameters<typeof clientFor> extends [Sandbox, ...infer R] ? R : never
) => {
  const made = clientFor(sandbox, ...args);
  clients.push(made.api);
  return made;
};
const exchangesSince = (mark: number) =>
  sandbox.control.requests({ routeId: "auth_token", since: mark });

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false, tokenTtlSeconds: 2 });
});
afterEach(async () => {
  sandbox.control.clearFaults();
  sandbox.control.skewClock(0);
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(() => sandbox.close());

describe("the bearer (spec part 5)", () => {
  it("exchanges once for 200 concurrent calls on a cold start, and once more after expiry", async () => {
    const { api } = client(SHARE_RAISED);
    const mark = sandbox.control.mark();
    const results = await Promise.all(
      Array.from({ length: 200 }, () => api.call("notifications_unread_count", {})),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(exchangesSince(mark)).toHaveLength(1);
    expect(api.tokens.exchanges).toBe(1);

    await sleep(2_100); // the sandbox's bearers live 2 s
    const next = sandbox.control.mark();
    await Promise.all(
      Array.from({ length: 200 }, () => api.call("notifications_unread_count", {})),
    );
    expect(exchangesSince(next)).toHaveLength(1);
    expect(
      sandbox.control
        .requests({ since: next, routeId: "notifications_unread_count" })
        .every((e) => e.status === 200),
    ).toBe(true);
  });

  it("renews shortly before expiry in the background: callers keep the current bearer meanwhile", async () => {
    const own = await startSandbox({ rateLimit: false, tokenTtlSeconds: 30 });
    let shiftMs = 0;
    const { api } = clientFor(own, SHARE_RAISED, { clock: () => Date.now() + shiftMs });
    try {
      await api.call("taxonomies_get", {});
      const first = await api.tokens.get();
      shiftMs = 28_000; // inside the renewal margin (3 s of a 30 s lifetime), before expiry
      const mark = own.control.mark();
      await Promise.all(Array.from({ length: 50 }, () => api.call("taxonomies_get", {})));
      const served = own.control.requests({ since: mark, routeId: "taxonomies_get" });
      expect(served.every((e) => e.headers.authorization === `Bearer ${first}`)).toBe(true);
      await sleep(50);
      expect(own.control.requests({ since: mark, routeId: "auth_token" })).toHaveLength(1);
      expect(await api.tokens.get()).not.toBe(first);
    } finally {
      await api.close();
      await own.close();
    }
  });

  it("recovers from bearers expired mid-run with one re-exchange and a new nonce", async () => {
    const { api } = client(SHARE_RAISED);
    await api.call("taxonomies_get", {});
    const mark = sandbox.control.mark();
    sandbox.control.expireAllBearers();
    const results = await Promise.all(
      Array.from({ length: 40 }, () => api.call("taxonomies_get", {})),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const exchanges = sandbox.control.requests({ routeId: "auth_token" });
    expect(exchangesSince(mark)).toHaveLength(1);
    const nonces = exchanges.map((e) => (e.body as { nonce: string }).nonce);
    expect(new Set(nonces).size).toBe(nonces.length);
    const signatures = exchanges.map((e) => (e.body as { signature: string }).signature);
    expect(new Set(signatures).size).toBe(signatures.length);
  });

  it("drops only the refused bearer: a newer one is kept", async () => {
    const { api } = client();
    await api.call("taxonomies_get", {});
    const old = await api.tokens.get();
    sandbox.control.expireAllBearers();
    await api.call("taxonomies_get", {}); // renews after its 401
    const fresh = await api.tokens.get();
    expect(fresh).not.toBe(old);
    api.tokens.invalidate(old); // a late 401 for the old bearer must not discard the new one
    expect(await api.tokens.get()).toBe(fresh);
  });

  it("corrects a 10-minute client clock skew through the Date header", async () => {
    const { api, logs } = client({}, { clock: () => Date.now() - 600_000 });
    const mark = sandbox.control.mark();
    const result = await api.call("taxonomies_get", {});
    expect(result.status).toBe(200);
    const exchanges = exchangesSince(mark);
    expect(exchanges.map((e) => e.status)).toEqual([401, 200]);
    const [first, second] = exchanges.map((e) => e.body as { nonce: string; timestamp: number });
    expect(second!.nonce).not.toBe(first!.nonce);
    expect(Math.abs(second!.timestamp - Date.now() / 1000)).toBeLessThan(5);
    expect(Math.abs(api.tokens.clockOffsetMs - 600_000)).toBeLessThan(3_000);
    expect(logs.text()).toContain("correcting for clock skew");
  });

  it("corrects a server clock that runs ahead", async () => {
    sandbox.control.skewClock(900);
    const { api } = client();
    expect((await api.call("taxonomies_get", {})).status).toBe(200);
    expect(Math.abs(api.tokens.clockOffsetMs - 900_000)).toBeLessThan(3_000);
  });

  it("surfaces a refused exchange as authentication_failed without retrying it", async () => {
    const { api } = client({ secret: "not-the-secret" });
    const mark = sandbox.control.mark();
    const error = await api.call("taxonomies_get", {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: "authentication_failed",
      status: 401,
      reasonCode: "invalid_signature",
    });
    expect(exchangesSince(mark)).toHaveLength(1);
    expect(sandbox.control.requests({ since: mark, routeId: "taxonomies_get" })).toHaveLength(0);
  });

  it("retries an exchange that met a 503, with a new nonce", async () => {
    const { api } = client({}, { sleep: async () => {} });
    sandbox.control.failNext(1, 503, { match: { kind: "exchange" } });
    const mark = sandbox.control.mark();
    expect((await api.call("taxonomies_get", {})).status).toBe(200);
    const exchanges = exchangesSince(mark);
    expect(exchanges.map((e) => e.status)).toEqual([503, 200]);
    expect((exchanges[0]!.body as { nonce: string }).nonce).not.toBe(
      (exchanges[1]!.body as { nonce: string }).nonce,
    );
  });
});

describe("expires_at in every format the spec allows", () => {
  it.each(["iso", "unix", "unix-ms"] as const)("reads %s and renews on time", async (format) => {
    const own = await startSandbox({
      rateLimit: false,
      tokenTtlSeconds: 2,
      expiresAtFormat: format,
    });
    const { api } = clientFor(own);
    try {
      await api.call("taxonomies_get", {});
      await sleep(2_100);
      const mark = own.control.mark();
      await api.call("taxonomies_get", {});
      // Renewed before use, not after a 401: the expiry was read correctly.
      expect(own.control.requests({ since: mark }).map((e) => `${e.routeId} ${e.status}`)).toEqual([
        "auth_token 200",
        "taxonomies_get 200",
      ]);
    } finally {
      await api.close();
      await own.close();
    }
  });
});
