import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { type AddressInfo, createServer } from "node:net";
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
