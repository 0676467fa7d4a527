import { spawn } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, createServer, type Socket, connect as tcpConnect } from "node:net";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisRow } from "../../src/doctor.js";
import { userMessage } from "../../src/errors.js";
import { connectRedis } from "../../src/state/redis.js";
import { inspectRedis } from "../../src/state/redis-health.js";
import { WriteGate } from "../../src/writes/gate.js";
import { IntentMac } from "../../src/writes/intent-mac.js";
import { RedisJournal } from "../../src/writes/redis-journal.js";
import { clientFor } from "../helpers/api.js";
import { dropAndClose, privateRedisServer, REDIS_URL, testRedis } from "../helpers/redis.js";
import { type ClientEntry, startShared } from "../helpers/shared.js";

const camille: ClientEntry = {
  name: "camille",
  token: "outage-token-camille-0123456789",
  delegated_user: { email: "camille.martin@aurore-capital.example" },
};
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(async () => {
  await sandbox.close();
});

const text = (result: any): string => result.content?.[0]?.text ?? "";
const draftDashboard = (client: any, name: string) =>
  client.callTool({ name: "create_custom_dashboard", arguments: { name } });

describe("a replica whose Redis goes away", () => {
  it("answers write tools with one sentence and sends nothing, is not ready, and recovers", async () => {
    const redis = await privateRedisServer();
    const replica = await startShared(sandbox, [camille], {
      PORTFOLIO_REDIS_URL: redis.url,
      PORTFOLIO_STATE_SECRET: "s".repeat(32),
    });
    const { client } = await replica.connect(camille.token);
    try {
      const drafted = (await draftDashboard(client, "Drafted before the outage")) as any;
      expect(drafted.isError).toBeFalsy();
      expect((await replica.raw("GET", "/readyz")).status).toBe(200);

      await redis.stop();
      const mark = sandbox.control.mark();
      const sentence = `The shared state store (Redis at 127.0.0.1:${redis.port}) does not answer; nothing was sent. Try again when it is back.`;
      const confirmed = (await client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: drafted.structuredContent.confirmation_id },
      })) as any;
      // About a confirmation, only what is known: this call sent nothing.
      expect([confirmed.isError, text(confirmed)]).toEqual([
        true,
        `The shared state store (Redis at 127.0.0.1:${redis.port}) does not answer: this confirmation sent nothing, and what became of the write is not known until the store answers; ask again with the same confirmation id once it is back (the write can never be sent twice).`,
      ]);
      const another = (await draftDashboard(client, "Drafted during the outage")) as any;
      expect([another.isError, text(another)]).toEqual([true, sentence]);
      expect(sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" })).toEqual(
        [],
      );
      // Reads need no shared state: this replica serves them alone meanwhile.
      const read = (await client.callTool({ name: "list_deals", arguments: { limit: 1 } })) as any;
      expect(read.isError).toBeFalsy();
      const ready = await replica.raw("GET", "/readyz");
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body).reason).toBe(
        `The shared state store (Redis at 127.0.0.1:${redis.port}) does not answer: writes cannot be recorded; check that Redis runs and that PORTFOLIO_REDIS_URL points at it.`,
      );

      // Back (empty: it kept nothing): the replica reconnects on its own and writes again.
      await redis.start();
      while ((await replica.raw("GET", "/readyz")).status !== 200)
        await new Promise((resolve) => setTimeout(resolve, 200));
      const after = (await draftDashboard(client, "Drafted after the outage")) as any;
      const done = (await client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: after.structuredContent.confirmation_id },
      })) as any;
      expect(done.structuredContent?.status, text(done)).toBe("succeeded");
      expect(
        sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" }),
      ).toHaveLength(1);
    } finally {
      await client.close();
      await replica.stop();
      await redis.stop();
    }
  }, 60_000);
});

/**
 * A loopback relay to the test Redis that can stop relaying: the connection stays open and
 * Redis never answers, as with a stalled server or a network partition.
 */
async function stallableRelay(port: number) {
  const sockets: Socket[] = [];
  const relay = createServer((client) => {
    const upstream = tcpConnect(port, "127.0.0.1");
    sockets.push(client, upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  return {
    port: (relay.address() as AddressInfo).port,
    stall: () => {
      for (const socket of sockets) socket.pause();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    },
  };
}

describe("a Redis that stops answering on an open connection", () => {
  it("fails a confirmation within the deadline, with the sentence, and sends nothing", async () => {
    const cleanup = await testRedis("stalled");
    const relay = await stallableRelay(Number(new URL(REDIS_URL).port || 6379));
    const redis = await connectRedis({
      url: `redis://127.0.0.1:${relay.port}/${new URL(REDIS_URL).pathname.slice(1) || "0"}`,
      prefix: cleanup.prefix,
    });
    const { api, logs } = clientFor(sandbox);
    const gate = await WriteGate.open({
      store: new RedisJournal(redis, new IntentMac(Buffer.alloc(32, 7)), { logger: logs.logger }),
      api,
      logger: logs.logger,
      ttlMs: 60_000,
      maxPendingPerUser: 10,
    });
    const caller = { sessionId: "s", client: "camille" };
    const user = { email: sandbox.credentials.delegatedUserEmail };
    try {
      const drafted = await gate.propose(
        {
          operation: "custom_dashboard_create",
          path: {},
          body: { name: "Stalled" },
          preview: { action: "Create", target: "Stalled", fields: {}, billable: false },
        },
        caller,
        user,
        "two-step",
      );
      relay.stall();
      const mark = sandbox.control.mark();
      // Not "hangs until the test times out": a bounded wait, then the sentence.
      const refused = await gate
        .confirm(drafted.confirmationId, caller, user, "two-step")
        .catch((e) => e);
      // The read before the claim got no answer: this call sent nothing, and it says no more
      // than that about the write (an earlier confirmation might have sent it).
      expect(userMessage(refused)).toBe(
        `The shared state store (Redis at 127.0.0.1:${relay.port}) does not answer: this confirmation sent nothing, and what became of the write is not known until the store answers; ask again with the same confirmation id once it is back (the write can never be sent twice).`,
      );
      expect(sandbox.control.requests({ since: mark })).toEqual([]);
    } finally {
      gate.close();
      await api.close();
      redis.client.destroy();
      await relay.close();
      await dropAndClose(cleanup);
    }
  }, 30_000);
});

describe("doctor's Redis row", () => {
  const facts = {
    where: "127.0.0.1:6379",
    prefix: "portfolio-mcp:",
    unreachable: null,
    appendonly: "yes",
    appendfsync: "everysec",
    unfinished: 0,
    quarantined: 0,
    secret: { verdict: "same" as const, mismatch: "this replica's PORTFOLIO_STATE_SECRET differs" },
  };

  it("is ok with AOF and the fleet's secret, warns without AOF, fails with another secret", () => {
    expect(redisRow(facts)).toEqual({
      check: "shared state (Redis)",
      status: "ok",
      detail:
        "PONG from 127.0.0.1:6379, prefix portfolio-mcp:, AOF on (appendfsync everysec), 0 confirmed write(s) unfinished",
    });
    const noAof = redisRow({ ...facts, appendonly: "no" });
    expect(noAof.status).toBe("warning");
    expect(noAof.detail).toContain("AOF is recommended for the write journal (appendonly yes");
    const other = redisRow({ ...facts, secret: { ...facts.secret, verdict: "different" } });
    expect(other.status).toBe("failed");
    expect(other.detail).toContain("this replica's PORTFOLIO_STATE_SECRET differs");
    expect(redisRow({ ...facts, secret: { ...facts.secret, verdict: "none" } }).status).toBe("ok");
    expect(redisRow({ ...facts, appendonly: null }).detail).toContain(
      "persistence unknown (CONFIG GET refused)",
    );
    expect(redisRow({ ...facts, quarantined: 2 }).status).toBe("failed");
  });

  it("reads the real server: PING, prefix, persistence", async () => {
    const seen = await inspectRedis({ url: REDIS_URL, prefix: "pmcp-test:doctor:" }, null);
    expect(seen).toMatchObject({ unreachable: null, prefix: "pmcp-test:doctor:" });
    expect(["yes", "no", null]).toContain(seen.appendonly);
  });

  it("fails with a sentence, never the password, when Redis is at a closed port", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const child = spawn(process.execPath, [CLI, "doctor", "--sandbox"], {
      env: {
        ...Object.fromEntries(
          Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
        ),
        PORTFOLIO_REDIS_URL: `redis://:hunter2@127.0.0.1:${port}/0`,
        PORTFOLIO_STATE_SECRET: "s".repeat(32),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(2);
    expect(out).toMatch(
      new RegExp(
        `shared state \\(Redis\\)\\s+failed\\s+The shared state store \\(Redis at 127\\.0\\.0\\.1:${port}\\) does not answer \\(.*\\): check that Redis runs and that PORTFOLIO_REDIS_URL points at it\\.`,
      ),
    );
    expect(out).not.toContain("hunter2");
    // The rest of the checks still ran: doctor reports, it does not stop at Redis.
    expect(out).toMatch(/token exchange\s+ok/);
  }, 60_000);
});
