import { setTimeout as sleep } from "node:timers/promises";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ClientEntry, startShared, stopShared } from "../helpers/shared.js";

/**
 * Sessions are capped per client and in total. With the total reached, a client with no
 * session used to be refused (503): ten clients at their quota of 20 held all 200. Now the
 * newcomer gets the least recently used idle session of the client holding the most, and a
 * session with a call in flight is never the one taken.
 */
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());
afterEach(stopShared);

const USER = { email: "camille.martin@aurore-capital.example" };
const client = (i: number): ClientEntry => ({
  name: `c${i}`,
  token: `session-share-token-${i}-0123456789`,
  delegated_user: USER,
});
type Shared = Awaited<ReturnType<typeof startShared>>;
/** Until the sandbox holds every call a delay rule was for: those calls are in flight. */
async function arrived(rule: number) {
  while (sandbox.control.faultRemaining(rule) > 0) await sleep(10);
}
const works = (session: Awaited<ReturnType<Shared["connect"]>>) =>
  session.client.ping().then(
    () => true,
    () => false,
  );

describe("sessions shared out between clients", () => {
  it("with every session taken by ten clients at their quota, an eleventh still opens one", async () => {
    const clients = Array.from({ length: 11 }, (_, i) => client(i));
    const shared = await startShared(sandbox, clients, {
      PORTFOLIO_MCP_MAX_SESSIONS: "20",
      PORTFOLIO_MCP_MAX_SESSIONS_PER_CLIENT: "2",
    });
    const open: Array<Awaited<ReturnType<Shared["connect"]>>> = [];
    try {
      for (const c of clients.slice(0, 10))
        for (let n = 0; n < 2; n++) open.push(await shared.connect(c.token));
      // Everyone but c0's first session has been used since: that one is the oldest idle.
      for (const session of open.slice(1)) expect(await works(session)).toBe(true);
      const newcomer = await shared.connect(clients[10]!.token);
      expect(await works(newcomer)).toBe(true);
      expect(await works(open[0]!)).toBe(false);
      for (const session of open.slice(1)) expect(await works(session)).toBe(true);
      const metrics = (await shared.raw("GET", "/metrics")).body;
      expect(metrics).toMatch(/portfolio_mcp_sessions_open 20/);
      open.push(newcomer);
    } finally {
      await Promise.all(open.map((s) => s.client.close().catch(() => {})));
      await shared.stop();
    }
  });

  it("never takes a session with a call in flight; refuses when every candidate is busy", async () => {
    const clients = [client(0), client(1), client(2)];
    const shared = await startShared(sandbox, clients, {
      PORTFOLIO_MCP_MAX_SESSIONS: "3",
      PORTFOLIO_MCP_MAX_SESSIONS_PER_CLIENT: "3",
    });
    const open: Array<Awaited<ReturnType<Shared["connect"]>>> = [];
    try {
      const [g1, g2, g3] = [
        await shared.connect(clients[0]!.token),
        await shared.connect(clients[0]!.token),
        await shared.connect(clients[0]!.token),
      ];
      open.push(g1!, g2!, g3!);
      // g1 starts a slow call, then g2 and g3 are used: g1 is the least recently used, but busy.
      const held = sandbox.control.delay(2_500, { count: 1, match: { routeId: "deals_list" } });
      const slow = g1!.client.callTool({ name: "list_deals", arguments: { limit: 1 } });
      await arrived(held);
      expect(await works(g2!)).toBe(true);
      expect(await works(g3!)).toBe(true);
      const newcomer = await shared.connect(clients[1]!.token);
      open.push(newcomer);
      expect(await works(g2!)).toBe(false); // the least recently used idle one
      expect(await works(g3!)).toBe(true);
      expect(((await slow) as { isError?: boolean }).isError).toBeFalsy();

      // Now g1 and g3 (client 0) and the newcomer (client 1) hold the three; with each of them
      // busy, client 2 finds nothing it may take.
      const three = sandbox.control.delay(2_000, { count: 3, match: { routeId: "deals_list" } });
      const busy = [g1!, g3!, newcomer].map((s) =>
        s.client.callTool({ name: "list_deals", arguments: { limit: 1 } }),
      );
      await arrived(three);
      await expect(shared.connect(clients[2]!.token)).rejects.toThrow(
        /Too many open sessions; retry shortly/,
      );
      await Promise.all(busy);
      const late = await shared.connect(clients[2]!.token);
      open.push(late);
      expect(await works(late)).toBe(true);
    } finally {
      await Promise.all(open.map((s) => s.client.close().catch(() => {})));
      await shared.stop();
    }
  });
});
