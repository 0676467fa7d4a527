import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { openMetrics } from "../../src/telemetry/meter.js";
import { ClientRegistry } from "../../src/transport/clients.js";
import { peerOf } from "../../src/transport/connections.js";
import { serveHttp } from "../../src/transport/http.js";
import { rawRequest } from "../helpers/raw.js";
import { startShared, stopShared } from "../helpers/shared.js";

/**
 * One peer holding thousands of idle sockets used to take every connection the server allows
 * (2,000): the next peer's connections were reset. Sockets are now capped per peer address
 * (PORTFOLIO_MCP_MAX_CONNECTIONS_PER_PEER), and at either cap the oldest idle socket of the
 * peer holding the most is closed for a newcomer. 127.0.0.2 floods; 127.0.0.1 is the other
 * peer, through the SDK's client.
 */
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());
afterEach(stopShared);

const TOKEN = "socket-flood-token-0123456789";
const USER = { email: "camille.martin@aurore-capital.example" };

/** `count` sockets from `localAddress` that connect and say nothing; and how many are still open. */
async function flood(port: number, count: number, localAddress: string) {
  const sockets: Socket[] = [];
  let closed = 0;
  for (let started = 0; started < count; started += 100) {
    const batch = Array.from({ length: Math.min(100, count - started) }, () => {
      const socket = connect({ port, host: "127.0.0.1", localAddress });
      socket.on("error", () => {});
      socket.on("close", () => closed++);
      sockets.push(socket);
      return once(socket, "connect").catch(() => undefined);
    });
    await Promise.all(batch);
  }
  return {
    open: () => count - closed,
    close: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

describe("a peer flooding the server with idle sockets", () => {
  it("2,050 idle sockets from one address: another peer's requests all succeed", async () => {
    const shared = await startShared(sandbox, [{ name: "c", token: TOKEN, delegated_user: USER }]);
    const port = Number(new URL(shared.url).port);
    const attacker = await flood(port, 2_050, "127.0.0.2");
    try {
      // The server keeps the newest 512 (the per-peer default), well before the headers timeout.
      const deadline = Date.now() + 5_000;
      while (attacker.open() > 512 && Date.now() < deadline) await sleep(20);
      expect(attacker.open()).toBe(512);
      let ok = 0;
      for (let i = 0; i < 20; i++) {
        const session = await shared.connect(TOKEN);
        const reply = (await session.client.callTool({
          name: "list_deals",
          arguments: { limit: 1 },
        })) as { isError?: boolean };
        if (!reply.isError) ok++;
        await session.client.close();
      }
      expect(ok).toBe(20);
      const health = await shared.raw("GET", "/healthz");
      expect(health.status).toBe(200);
    } finally {
      attacker.close();
      await shared.stop();
    }
  });
});

/**
 * The HTTP endpoint alone (no MCP server behind it): small caps by default, and a /readyz that
 * takes `readyMs`, to hold a request in progress.
 */
async function endpoint(
  options: {
    readyMs?: number;
    perPeer?: number;
    connections?: { headersTimeoutMs: number; checkEveryMs: number; max: number };
  } = {},
) {
  const metrics = await openMetrics({
    metrics: null,
    serviceName: "connections-test",
    instance: "test",
    metricIntervalMs: 60_000,
  });
  const inReady = { count: 0 };
  const http = await serveHttp({
    host: "127.0.0.1",
    port: 0,
    clients: ClientRegistry.single(TOKEN, USER),
    allowedHosts: [],
    allowedOrigins: [],
    maxBodyBytes: 1024,
    maxSessions: 10,
    maxSessionsPerClient: 10,
    maxConnectionsPerPeer: options.perPeer ?? 4,
    sessionIdleMs: 60_000,
    rateLimitPerMinute: 600,
    stateless: false,
    connections: options.connections ?? { headersTimeoutMs: 10_000, checkEveryMs: 1_000, max: 6 },
    createServer: () => {
      throw new Error("no server is built in this test");
    },
    ready: () => {
      inReady.count++;
      return sleep(options.readyMs ?? 0).then(() => ({ ready: true }));
    },
    metrics,
    logger: createLogger({ level: "silent" }),
  });
  return { http, metrics, inReady };
}

describe("connection hygiene", () => {
  it("closes a connection that never finishes its headers, and caps connections", async () => {
    const { http } = await endpoint({
      perPeer: 10,
      connections: { headersTimeoutMs: 300, checkEveryMs: 100, max: 3 },
    });
    /** Milliseconds until the server closes a connection whose headers never end. */
    const slowClient = () =>
      new Promise<number>((resolve) => {
        const started = Date.now();
        const socket = connect(http.port, "127.0.0.1", () =>
          socket.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
        );
        socket.on("error", () => {});
        socket.resume(); // read the server's 408 and end, or 'close' never comes
        socket.on("close", () => resolve(Date.now() - started));
      });
    try {
      const closed = await Promise.all(Array.from({ length: 5 }, slowClient));
      // Over the cap of 3, the fourth and fifth each close the oldest socket still waiting for
      // its headers at once; the three others end at the header timeout.
      expect(closed.filter((ms) => ms < 150)).toHaveLength(2);
      for (const ms of closed) expect(ms).toBeLessThan(2_000);
    } finally {
      await http.close(0);
    }
  });
});

describe("the per-peer and total caps", () => {
  const healthz = (port: number) =>
    rawRequest(`http://127.0.0.1:${port}`, "GET", "/healthz", { host: `127.0.0.1:${port}` });

  it("at the total, the oldest idle socket of the peer holding the most makes room", async () => {
    const { http, metrics } = await endpoint();
    const a = await flood(http.port, 4, "127.0.0.2");
    const b = await flood(http.port, 2, "127.0.0.3");
    try {
      expect((await healthz(http.port)).status).toBe(200);
      const deadline = Date.now() + 3_000;
      while (a.open() > 3 && Date.now() < deadline) await sleep(20);
      expect([a.open(), b.open()]).toEqual([3, 2]);
      expect(await metrics.render()).toContain(
        'portfolio_mcp_connections_limited_total{cap="total",action="closed_idle"} 1',
      );
    } finally {
      a.close();
      b.close();
      await http.close(0);
    }
  });

  it("never closes a socket serving a request: a peer whose sockets are all busy is refused more", async () => {
    const { http, metrics, inReady } = await endpoint({ readyMs: 1_500 });
    const busy = Array.from({ length: 4 }, () =>
      rawRequest(`http://127.0.0.1:${http.port}`, "GET", "/readyz", {
        host: `127.0.0.1:${http.port}`,
      }),
    );
    try {
      while (inReady.count < 4) await sleep(10); // four sockets from 127.0.0.1, each busy
      await expect(healthz(http.port)).rejects.toThrow(/ECONNRESET|socket hang up/);
      expect(await metrics.render()).toContain(
        'portfolio_mcp_connections_limited_total{cap="peer",action="refused"} 1',
      );
      for (const reply of await Promise.all(busy)) expect(reply.status).toBe(200);
      expect((await healthz(http.port)).status).toBe(200);
    } finally {
      await http.close(0);
    }
  });

  it("PORTFOLIO_MCP_MAX_CONNECTIONS_PER_PEER: a whole number from 1 (default 512)", () => {
    const env = {
      PORTFOLIO_API_BASE_URL: "https://partner.example.com/api/v1",
      PORTFOLIO_API_KEY_ID: "acme2026",
      PORTFOLIO_API_SECRET: "s3cret-value",
    };
    expect(loadConfig({ env }).server.maxConnectionsPerPeer).toBe(512);
    expect(() =>
      loadConfig({ env: { ...env, PORTFOLIO_MCP_MAX_CONNECTIONS_PER_PEER: "0" } }),
    ).toThrow("PORTFOLIO_MCP_MAX_CONNECTIONS_PER_PEER: must be at least 1");
  });

  it("groups IPv6 addresses by /64 and IPv4-mapped ones as IPv4", () => {
    expect(peerOf("2001:db8:1:2:aaaa::1")).toBe(peerOf("2001:0db8:0001:0002:ffff:1:2:3"));
    expect(peerOf("2001:db8:1:2::1")).not.toBe(peerOf("2001:db8:1:3::1"));
    expect(peerOf("::ffff:127.0.0.2")).toBe("127.0.0.2");
    expect(peerOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(peerOf("::1")).toBe("0:0:0:0::/64");
  });
});
