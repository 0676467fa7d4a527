import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis, type SharedRedis } from "../../src/state/redis.js";
import { REDIS_URL } from "../helpers/redis.js";
import { type ClientEntry, startShared } from "../helpers/shared.js";

/** Replicas on one Redis share it: it authenticates the intents they share. */
const STATE_SECRET = "fair-share-test-state-secret-0123456789";

/**
 * Whose share an upstream request is counted against, whatever the way in: the principal
 * rides the async context from the SDK's request handler down to the attempt loop. Seen where
 * the count is kept: the principal's bucket on Redis (keyed by a hash of its name).
 */
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const prefix = `pmcp-test:share-principal:${randomBytes(4).toString("hex")}:`;
const entry = (name: string): ClientEntry => ({
  name,
  token: `share-principal-token-${name}-0123456789`,
  delegated_user: { email: "camille.martin@aurore-capital.example" },
});
const [alice, bob, carol] = [entry("alice"), entry("bob"), entry("carol")];
const CANDIDATES = [
  "server:sign-in",
  "server",
  "http:alice",
  "http:bob",
  "http:carol",
  "stdio:attribution-stdio",
];
const READ = { name: "list_deals", arguments: { limit: 2 } };

let sandbox: Sandbox;
let redis: SharedRedis;
let sessions: Awaited<ReturnType<typeof startShared>>;
let stateless: Awaited<ReturnType<typeof startShared>>;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  redis = await connectRedis({ url: REDIS_URL, prefix });
  const env = {
    PORTFOLIO_REDIS_URL: REDIS_URL,
    PORTFOLIO_REDIS_PREFIX: prefix,
    PORTFOLIO_STATE_SECRET: STATE_SECRET,
  };
  [sessions, stateless] = await Promise.all([
    startShared(sandbox, [alice, bob, carol], env),
    startShared(sandbox, [alice, bob, carol], env, ["--stateless"]),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([sessions?.stop(), stateless?.stop()]);
  for await (const keys of redis.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 }))
    if (keys.length > 0) await redis.client.del(keys);
  await redis.close();
  await sandbox.close();
});

const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32);

/** Each known principal's bucket: its theoretical arrival time, or null when it has none. */
async function buckets(): Promise<Record<string, number | null>> {
  const key = hash(`${sandbox.baseUrl}\n${sandbox.credentials.keyId}`);
  const out: Record<string, number | null> = {};
  for (const name of CANDIDATES) {
    const t = await redis.client.hGet(`${prefix}upstream:{${key}}:p:${hash(name)}`, "t");
    out[name] = t === null || t === undefined ? null : Number(t);
  }
  return out;
}

/**
 * Runs one read and says which principals' buckets it moved. A process's first call may also
 * sign in (the server's own turn) unless another process's bearer is found on Redis.
 */
async function countedFor(read: () => Promise<unknown>): Promise<string[]> {
  const before = await buckets();
  await read();
  const after = await buckets();
  return CANDIDATES.filter((name) => after[name] !== before[name]);
}

const withoutSignIn = (names: string[]) => names.filter((name) => name !== "server:sign-in");

const bearer = (who: ClientEntry) => ({ headers: { Authorization: `Bearer ${who.token}` } });

describe("each upstream request counts against the principal that asked", () => {
  it("a 2025 session over HTTP, and the token exchange against the server's own share", async () => {
    const client = new Client({ name: "attribution-2025", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(sessions.url), { requestInit: bearer(alice) }),
    );
    try {
      // The first call signs in: that exchange is the server's, the read alice's.
      expect(await countedFor(() => client.callTool(READ))).toEqual([
        "server:sign-in",
        "http:alice",
      ]);
      expect(await countedFor(() => client.callTool(READ))).toEqual(["http:alice"]);
      // A resource read goes through the same hook.
      expect(
        await countedFor(() => client.readResource({ uri: "portfolio://taxonomies" })),
      ).toEqual(["http:alice"]);
    } finally {
      await client.close();
    }
  });

  it("a 2026-07-28 client over HTTP", async () => {
    const client = new ModernClient(
      { name: "attribution-2026", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernHttp(new URL(sessions.url), { requestInit: bearer(bob) }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(await countedFor(() => client.callTool(READ))).toEqual(["http:bob"]);
    } finally {
      await client.close();
    }
  });

  it("a 2025 client of a stateless server (a fresh server per request)", async () => {
    const client = new Client({ name: "attribution-stateless", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(stateless.url), { requestInit: bearer(carol) }),
    );
    try {
      expect(withoutSignIn(await countedFor(() => client.callTool(READ)))).toEqual(["http:carol"]);
    } finally {
      await client.close();
    }
  });

  it("stdio clients of both eras, by the name they give", async () => {
    const env = {
      ...(Object.fromEntries(
        Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
      ) as Record<string, string>),
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
      PORTFOLIO_API_SECRET: sandbox.credentials.secret,
      PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "share-principal-")),
      PORTFOLIO_REDIS_URL: REDIS_URL,
      PORTFOLIO_REDIS_PREFIX: prefix,
      PORTFOLIO_STATE_SECRET: STATE_SECRET,
      PORTFOLIO_LOG_LEVEL: "error",
    };
    const legacy = new Client({ name: "attribution-stdio", version: "1.0.0" });
    await legacy.connect(new StdioClientTransport({ command: process.execPath, args: [CLI], env }));
    try {
      expect(withoutSignIn(await countedFor(() => legacy.callTool(READ)))).toEqual([
        "stdio:attribution-stdio",
      ]);
    } finally {
      await legacy.close();
    }
    const modern = new ModernClient(
      { name: "attribution-stdio", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await modern.connect(new ModernStdio({ command: process.execPath, args: [CLI], env }));
    try {
      expect(withoutSignIn(await countedFor(() => modern.callTool(READ)))).toEqual([
        "stdio:attribution-stdio",
      ]);
    } finally {
      await modern.close();
    }
  }, 30_000);
});
