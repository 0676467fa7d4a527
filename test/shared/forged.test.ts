import { randomBytes } from "node:crypto";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis, type SharedRedis } from "../../src/state/redis.js";
import { REDIS_URL } from "../helpers/redis.js";
import { type ClientEntry, startShared } from "../helpers/shared.js";

/**
 * Someone who can write the fleet's Redis keys, but does not hold PORTFOLIO_STATE_SECRET. Before
 * issue 22 a "confirmed" intent added there was delivered within seconds by a replica, with no
 * human, no sensitivity rule and no allowlist: a note written, a task deleted (an operation not
 * offered), a dashboard attempted as another user. Two real `serve --http` replicas, one Redis.
 */
const camille: ClientEntry = {
  name: "camille",
  token: "forged-token-camille-0123456789",
  delegated_user: { email: "camille.martin@aurore-capital.example" },
};
const SECRET = "forged-test-fleet-secret-0123456789abcdef";
const prefix = `pmcp-test:forged:${randomBytes(4).toString("hex")}:`;
let sandbox: Sandbox;
let redis: SharedRedis;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  redis = await connectRedis({ url: REDIS_URL, prefix });
});
afterAll(async () => {
  for await (const keys of redis.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 }))
    if (keys.length > 0) await redis.client.del(keys);
  await redis.close();
  await sandbox.close();
});

const replicaEnv = (secret = SECRET) => ({
  PORTFOLIO_REDIS_URL: REDIS_URL,
  PORTFOLIO_REDIS_PREFIX: prefix,
  PORTFOLIO_STATE_SECRET: secret,
  PORTFOLIO_ALLOW_SENSITIVE: "",
});

describe("intents written into Redis without the fleet's secret", () => {
  it("are quarantined with a log line and a metric, and never delivered", async () => {
    const replicas = await Promise.all(
      [1, 2].map(() => startShared(sandbox, [camille], replicaEnv())),
    );
    try {
      const { client } = await replicas[0]!.connect(camille.token);
      const operation = sandbox.control.state.data.operations[7]!;
      const draft = (await client.callTool({
        name: "create_operation_note",
        arguments: { operation_id: operation.id, content: "Brouillon légitime" },
      })) as any;
      expect(draft.structuredContent.status).toBe("awaiting_confirmation");
      const id = /\[(cf_[^\]]+)\]$/.exec(draft.structuredContent.confirmation_id)![1]!;
      const genuine = JSON.parse((await redis.client.hGet(`${prefix}intent:${id}`, "doc"))!);
      await client.close();

      const mark = sandbox.control.mark();
      const task = sandbox.control.state.data.tasks[2]!;
      const confirmed = { state: "sending", confirmedAt: new Date().toISOString(), attempts: 0 };
      const forgeries: Record<string, object> = {
        // The genuine draft, "confirmed" with other content: its MAC no longer holds.
        [id]: { ...genuine, ...confirmed, body: { content: "Note forgée" } },
        // A deletion nobody offered (PORTFOLIO_ALLOW_SENSITIVE is empty), with no MAC.
        cf_forgedtaskdelete01: {
          ...genuine,
          ...confirmed,
          id: "cf_forgedtaskdelete01",
          operation: "task_delete",
          route: { method: "DELETE", path: "/tasks/{task_id}", capability: null, bodyType: "json" },
          path: { task_id: task.id },
          body: null,
          mac: undefined,
        },
        // A dashboard as another user, with a made-up MAC.
        cf_forgeddashboard001: {
          ...genuine,
          ...confirmed,
          id: "cf_forgeddashboard001",
          operation: "custom_dashboard_create",
          route: {
            method: "POST",
            path: "/users/me/custom-dashboards",
            capability: "custom_dashboards",
            bodyType: "json",
          },
          path: {},
          body: { name: "Tableau forgé" },
          delegatedUser: { email: "someone.else@aurore-capital.example" },
          mac: "0f".repeat(32),
        },
      };
      for (const [key, doc] of Object.entries(forgeries)) {
        await redis.client.hSet(`${prefix}intent:${key}`, { doc: JSON.stringify(doc), rev: "5" });
        // Due at once for the replicas' look for abandoned deliveries (every 5 s).
        await redis.client.zAdd(`${prefix}intents-open`, { score: 0, value: key });
      }
      const quarantined = async () => redis.client.hLen(`${prefix}intents-quarantine`);
      const deadline = Date.now() + 20_000;
      while ((await quarantined()) < 3 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await quarantined()).toBe(3);
      // A little longer: nothing is delivered late either.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(
        sandbox.control
          .requests({ since: mark })
          .filter((r) => r.method !== "GET" && r.routeId !== "auth_token"),
      ).toEqual([]);
      expect(sandbox.control.state.data.tasks.some((t) => t.id === task.id)).toBe(true);
      expect(await redis.client.zCard(`${prefix}intents-open`)).toBe(0);

      const logs = (await Promise.all(replicas.map((r) => r.stderr()))).join("");
      expect(logs).toContain("its MAC does not verify (written without this server's key)");
      const metrics = await Promise.all(replicas.map((r) => r.raw("GET", "/metrics")));
      const counted = metrics
        .map(
          (m) => /portfolio_mcp_intents_quarantined_total\{store="redis"\} (\d+)/.exec(m.body)?.[1],
        )
        .reduce((sum, n) => sum + Number(n ?? 0), 0);
      expect(counted).toBe(3);
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
    }
  }, 60_000);

  it("a replica with another secret is not ready, says why, and sets nothing of the fleet's aside", async () => {
    const fleet = await startShared(sandbox, [camille], replicaEnv());
    const stranger = await startShared(
      sandbox,
      [camille],
      replicaEnv("another-secret-entirely-0123456789abcdef"),
    );
    try {
      expect((await fleet.raw("GET", "/readyz")).status).toBe(200);
      const verdict = await stranger.raw("GET", "/readyz");
      expect(verdict.status).toBe(503);
      expect(JSON.parse(verdict.body).reason).toContain(
        "This replica's PORTFOLIO_STATE_SECRET differs from the one the other replicas sharing",
      );
      // A draft of the fleet, confirmed through the stranger (a balancer that ignores /readyz).
      const { client } = await fleet.connect(camille.token);
      const draft = (await client.callTool({
        name: "create_custom_dashboard",
        arguments: { name: "Pas pour l'étranger" },
      })) as any;
      await client.close();
      const via = await stranger.connect(camille.token);
      const mark = sandbox.control.mark();
      const refused = (await via.client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: draft.structuredContent.confirmation_id },
      })) as any;
      await via.client.close();
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text, await stranger.stderr()).toContain(
        "This server cannot verify the stored write",
      );
      expect(sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" })).toEqual(
        [],
      );
      // Still there for the fleet, which confirms it once.
      const again = await fleet.connect(camille.token);
      const done = (await again.client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: draft.structuredContent.confirmation_id },
      })) as any;
      await again.client.close();
      expect(done.structuredContent?.status, done.content?.[0]?.text).toBe("succeeded");
    } finally {
      await fleet.stop();
      await stranger.stop();
    }
  }, 60_000);
});
