import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis } from "../../src/state/redis.js";
import { REDIS_URL } from "../helpers/redis.js";
import { roundRobin } from "../helpers/round-robin.js";
import { type ClientEntry, SHARE_RAISED_ENV, startShared } from "../helpers/shared.js";

/**
 * Three `serve --http` processes, each with its own state directory, sharing one Redis and one
 * sandbox: what they share goes through Redis, nothing else.
 */
const prefix = `pmcp-test:fleet:${randomBytes(4).toString("hex")}:`;
/** What every replica of a fleet shares: it authenticates the intents on Redis. */
const FLEET_SECRET = "fleet-test-state-secret-0123456789abcdef";
const camille: ClientEntry = {
  name: "camille",
  token: "fleet-token-camille-0123456789",
  delegated_user: { email: "camille.martin@aurore-capital.example" },
};
let sandbox: Sandbox;
let replicas: Array<Awaited<ReturnType<typeof startShared>>> = [];

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  replicas = await Promise.all(
    [1, 2, 3].map(() =>
      startShared(sandbox, [camille], {
        PORTFOLIO_REDIS_URL: REDIS_URL,
        PORTFOLIO_REDIS_PREFIX: prefix,
        PORTFOLIO_STATE_SECRET: FLEET_SECRET,
        ...SHARE_RAISED_ENV, // hundreds of one client's calls at once are what is tested
      }),
    ),
  );
}, 60_000);
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await sandbox.close();
  const redis = await connectRedis({ url: REDIS_URL, prefix });
  for await (const keys of redis.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 }))
    if (keys.length > 0) await redis.client.del(keys);
  await redis.close();
});

/** `count` reads, dealt round the sessions in turn, all at once. */
const spread = (sessions: Array<{ client: Client }>, count: number) =>
  Promise.all(
    Array.from({ length: count }, (_, n) =>
      sessions[n % sessions.length]!.client.callTool({
        name: "list_deals",
        arguments: { limit: 1 },
      }),
    ),
  );

describe("three replicas on one Redis", () => {
  it("make one token exchange for 300 concurrent calls spread over them", async () => {
    const mark = sandbox.control.mark();
    const sessions = await Promise.all(replicas.map((r) => r.connect(camille.token)));
    try {
      const results = await spread(sessions, 300);
      expect(results.filter((r) => r.isError)).toEqual([]);
      expect(sandbox.control.requests({ since: mark, routeId: "auth_token" })).toHaveLength(1);
    } finally {
      await Promise.all(sessions.map((s) => s.client.close()));
    }
  }, 60_000);

  it("make exactly one more exchange once the API has expired the bearer", async () => {
    const sessions = await Promise.all(replicas.map((r) => r.connect(camille.token)));
    try {
      await Promise.all(
        sessions.map((s) => s.client.callTool({ name: "list_deals", arguments: { limit: 1 } })),
      );
      sandbox.control.expireAllBearers();
      const mark = sandbox.control.mark();
      const results = await spread(sessions, 60);
      expect(results.filter((r) => r.isError)).toEqual([]);
      expect(sandbox.control.requests({ since: mark, routeId: "auth_token" })).toHaveLength(1);
    } finally {
      await Promise.all(sessions.map((s) => s.client.close()));
    }
  }, 60_000);

  it("send one request when all three confirm the same write at once", async () => {
    const sessions = await Promise.all(replicas.map((r) => r.connect(camille.token)));
    try {
      const draft = (await sessions[0]!.client.callTool({
        name: "create_custom_dashboard",
        arguments: { name: "Confirmed thrice at once" },
      })) as any;
      const mark = sandbox.control.mark();
      const outcomes = (await Promise.all(
        sessions.map((s) =>
          s.client.callTool({
            name: "confirm_write",
            arguments: { confirmation_id: draft.structuredContent.confirmation_id },
          }),
        ),
      )) as any[];
      expect(outcomes.map((o) => o.structuredContent?.status)).toEqual([
        "succeeded",
        "succeeded",
        "succeeded",
      ]);
      expect(
        sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" }),
      ).toHaveLength(1);
    } finally {
      await Promise.all(sessions.map((s) => s.client.close()));
    }
  }, 60_000);

  it("confirm on one replica a write drafted on another, once", async () => {
    const [one, two] = await Promise.all([
      replicas[0]!.connect(camille.token),
      replicas[1]!.connect(camille.token),
    ]);
    try {
      const draft = (await one.client.callTool({
        name: "create_custom_dashboard",
        arguments: { name: "Fleet draft" },
      })) as any;
      const id = draft.structuredContent.confirmation_id;
      const mark = sandbox.control.mark();
      const confirmed = (await two.client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: id },
      })) as any;
      expect(confirmed.structuredContent.status).toBe("succeeded");
      expect(
        sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" }),
      ).toHaveLength(1);
    } finally {
      await one.client.close();
      await two.client.close();
    }
  }, 60_000);
});

/** Seconds this replica still holds back for a 429 (its /metrics gauge). */
async function cooldownOf(replica: (typeof replicas)[number]): Promise<number> {
  const metrics = await replica.raw("GET", "/metrics");
  return Number(/^portfolio_mcp_upstream_cooldown_seconds (\S+)$/m.exec(metrics.body)?.[1]);
}

describe("a 429 seen by one replica", () => {
  it("keeps the others from calling until its Retry-After has passed; their calls then go", async () => {
    const READ = "notifications_unread_count";
    const sessions = await Promise.all(replicas.map((r) => r.connect(camille.token)));
    const read = (n: number) =>
      sessions[n]!.client.callTool({ name: "get_unread_notification_count", arguments: {} });
    try {
      await Promise.all([0, 1, 2].map(read)); // all three signed in, nothing pending
      const mark = sandbox.control.mark();
      sandbox.control.rateLimitNext(1, 3, { routeId: READ });
      const first = read(0); // 429 with Retry-After: 3, then replica 1 waits and goes again
      // Replicas 2 and 3 learn of it over Redis: wait until both hold back (no fixed sleep).
      for (;;) {
        const held = await Promise.all([1, 2].map((n) => cooldownOf(replicas[n]!)));
        if (held.every((seconds) => seconds > 0)) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const [refused] = sandbox.control.requests({ since: mark, routeId: READ });
      expect(refused?.status).toBe(429);
      const windowEnds = Date.parse(refused!.at) + 3_000;
      const askedAt = Date.now();
      const others = await Promise.all([read(1), read(2)]);
      // The calls were made inside the window, and they waited it out rather than failing.
      expect(askedAt).toBeLessThan(windowEnds);
      expect(others.filter((r) => r.isError)).toEqual([]);
      expect((await first).isError).toBeFalsy();
      // Nothing reached the API from any replica until the window had passed: then the one
      // retry of replica 1 and the two calls of replicas 2 and 3.
      const after = sandbox.control.requests({ since: refused!.seq });
      expect(after.map((r) => [r.routeId, r.status])).toEqual([
        [READ, 200],
        [READ, 200],
        [READ, 200],
      ]);
      // Node's timers may fire a millisecond early; the log keeps whole milliseconds.
      for (const request of after)
        expect(Date.parse(request.at)).toBeGreaterThanOrEqual(windowEnds - 2);
    } finally {
      await Promise.all(sessions.map((s) => s.client.close()));
    }
  }, 60_000);
});

describe("a replica killed while delivering", () => {
  it("leaves the write to another, which finishes it with the same key: one record", async () => {
    const [doomed, survivor] = await Promise.all(
      [1, 2].map(() =>
        startShared(sandbox, [camille], {
          PORTFOLIO_REDIS_URL: REDIS_URL,
          PORTFOLIO_REDIS_PREFIX: prefix,
          PORTFOLIO_STATE_SECRET: FLEET_SECRET,
        }),
      ),
    );
    try {
      const session = await doomed!.connect(camille.token);
      const draft = (await session.client.callTool({
        name: "create_custom_dashboard",
        arguments: { name: "Killed mid-delivery" },
      })) as any;
      const mark = sandbox.control.mark();
      // The API holds the write 1.5 s, then applies it and answers a process that is gone.
      sandbox.control.hold(1_500, { match: { routeId: "custom_dashboard_create" } });
      // Not awaited: the client would wait for its own timeout on a process that is gone.
      void session.client
        .callTool({
          name: "confirm_write",
          arguments: { confirmation_id: draft.structuredContent.confirmation_id },
        })
        .catch(() => null);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await doomed!.stop("SIGKILL");
      void session.client.close().catch(() => null);
      const records = () =>
        sandbox.control.state.data.dashboards.filter((d) => d.name === "Killed mid-delivery");
      // Its lease (15 s) runs out; the survivor looks every 5 s and sends it again.
      const deadline = Date.now() + 40_000;
      let sent = sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" });
      while (sent.length < 2) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 250));
        sent = sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" });
      }
      const keys = sent.map((r) => r.headers["idempotency-key"]);
      expect(new Set(keys).size).toBe(1);
      expect(records()).toHaveLength(1);
    } finally {
      await doomed!.stop();
      await survivor!.stop();
    }
  }, 60_000);
});

describe("stateless 2025 clients behind a balancer with no affinity", () => {
  it("draft on one replica and confirm on the other, once", async () => {
    const stateless = await Promise.all(
      [1, 2].map(() =>
        startShared(
          sandbox,
          [camille],
          {
            PORTFOLIO_REDIS_URL: REDIS_URL,
            PORTFOLIO_REDIS_PREFIX: prefix,
            PORTFOLIO_STATE_SECRET: FLEET_SECRET,
          },
          ["--stateless"],
        ),
      ),
    );
    const balancer = await roundRobin(stateless.map((r) => r.url));
    const client = new Client({ name: "fleet-stateless", version: "1.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(balancer.url), {
          requestInit: { headers: { Authorization: `Bearer ${camille.token}` } },
        }),
      );
      const draft = (await client.callTool({
        name: "create_custom_dashboard",
        arguments: { name: "Stateless fleet draft" },
      })) as any;
      const mark = sandbox.control.mark();
      const confirmed = (await client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: draft.structuredContent.confirmation_id },
      })) as any;
      expect(confirmed.structuredContent.status).toBe("succeeded");
      expect(
        sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" }),
      ).toHaveLength(1);
      // The requests did go to both replicas.
      expect(new Set(balancer.sentTo).size).toBe(2);
    } finally {
      await client.close();
      await balancer.close();
      await Promise.all(stateless.map((r) => r.stop()));
    }
  }, 60_000);
});
