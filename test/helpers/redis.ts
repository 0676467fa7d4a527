import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { connectRedis, type SharedRedis } from "../../src/state/redis.js";

export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379/0";

/** A connection with a prefix of its own, so test files never see each other's keys. */
export async function testRedis(label: string): Promise<SharedRedis> {
  const prefix = `pmcp-test:${label}:${randomBytes(4).toString("hex")}:`;
  return connectRedis({ url: REDIS_URL, prefix });
}

/** Deletes every key under the connection's prefix, then closes it. */
export async function dropAndClose(redis: SharedRedis): Promise<void> {
  const keys: string[] = [];
  for await (const batch of redis.client.scanIterator({ MATCH: `${redis.prefix}*`, COUNT: 500 }))
    keys.push(...batch);
  if (keys.length > 0) await redis.client.del(keys);
  await redis.close();
}

/**
 * A redis-server of the test's own, on a free loopback port, without persistence: stopping it
 * is a Redis outage for whoever uses it. `start()` again brings it back, empty, on the same port.
 */
export async function privateRedisServer() {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const server = {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    async start() {
      const started = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        { stdio: ["ignore", "pipe", "ignore"] },
      );
      child = started;
      let seen = "";
      started.stdout!.setEncoding("utf8");
      await new Promise<void>((resolve, reject) => {
        started.stdout!.on("data", (chunk: string) => {
          seen += chunk;
          if (seen.includes("Ready to accept connections")) resolve();
        });
        started.once("error", reject);
        started.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${seen}`)));
      });
    },
    async stop() {
      const running = child;
      child = null;
      if (!running || running.exitCode !== null) return;
      running.kill("SIGKILL");
      await once(running, "exit");
    },
  };
  await server.start();
  return server;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A loopback relay to the test Redis whose answers can be held back: once a command containing
 * `trigger` passes through, every answer waits `delayMs` before it is relayed, for `forMs`
 * (answers stay in order). Commands themselves reach Redis at once: it runs them, and the
 * client learns of it late, as over a congested link.
 */
export async function slowRelay() {
  const port = Number(new URL(REDIS_URL).port || 6379);
  const sockets: Socket[] = [];
  let trigger: string | null = null;
  let delayMs = 0;
  let forMs = 0;
  let slowUntil = 0;
  let held = 0;
  const relay = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    sockets.push(client, upstream);
    let lastRelease = 0;
    client.on("data", (chunk: Buffer) => {
      if (trigger && chunk.includes(trigger)) {
        slowUntil = Date.now() + forMs;
        trigger = null;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      // Each answer is held `delayMs` from when it arrived, never less than the one before it:
      // latency, not a backlog that grows.
      const now = Date.now();
      const releaseAt = Math.max(now + (now < slowUntil ? delayMs : 0), lastRelease);
      lastRelease = releaseAt;
      held++;
      setTimeout(() => {
        held--;
        if (!client.destroyed) client.write(chunk);
      }, releaseAt - now);
    });
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const db = new URL(REDIS_URL).pathname.slice(1) || "0";
  return {
    url: `redis://127.0.0.1:${(relay.address() as AddressInfo).port}/${db}`,
    /** From the next command containing `text` on, hold answers `delay` ms each, for `during` ms. */
    slowAfter(text: string, delay: number, during: number) {
      trigger = text;
      delayMs = delay;
      forMs = during;
    },
    /**
     * Resolves once the slow spell is over and every answer it held has been released: only then
     * does a new command get an answer at the link's normal speed (answers keep their order, so
     * one held until late delays every answer behind it).
     */
    async calm() {
      while (trigger !== null || Date.now() < slowUntil || held > 0) {
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    },
  };
}
