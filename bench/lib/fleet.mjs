// Several `serve --http` replicas sharing one Redis, for `npm run chaos -- --fleet` and
// `npm run load -- --fleet`. Each run takes a fresh key prefix on that Redis and deletes its
// keys however the script ends (atStop); every replica is a registered child (spawnChild), so
// it is stopped however the script ends too.
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connectRedis, hostAndPort } from "../../dist/state/redis.js";
import { sha256Hex } from "../../dist/transport/clients.js";
import { atStop } from "../../scripts/lib/children.mjs";
import { spawnUntil } from "./processes.mjs";

const root = new URL("../..", import.meta.url).pathname;
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0";

/**
 * A fresh prefix on the Redis at `url`, deleted at the end. Exits the script with one sentence
 * (and code 1) when no Redis answers there: a fleet run means nothing without one.
 */
export async function fleetRedis(url, label) {
  let redis;
  try {
    redis = await connectRedis({ url, prefix: `pmcp-${label}:${randomBytes(4).toString("hex")}:` });
  } catch {
    process.stderr.write(
      `${label} --fleet needs a Redis and none answers at ${hostAndPort(url)}: start one (redis-server) or pass --redis redis://host:port/db.\n`,
    );
    process.exit(1);
  }
  const drop = atStop(async () => {
    let deleted = 0;
    for await (const keys of redis.client.scanIterator({ MATCH: `${redis.prefix}*`, COUNT: 500 }))
      if (keys.length > 0) deleted += await redis.client.del(keys);
    await redis.close();
    return deleted;
  });
  return { redis, url, prefix: redis.prefix, drop };
}

/**
 * Starts one `serve --http` replica on the shared Redis. `env` holds the deployment's settings
 * (API, clients file, contract); each replica gets its own state directory.
 */
export async function startReplica(env, name) {
  const state = join(root, "build", "fleet", name);
  mkdirSync(state, { recursive: true, mode: 0o700 });
  const server = await spawnUntil(
    process.execPath,
    [join(root, "dist", "cli.js"), "serve", "--http", "--port", "0"],
    { ...env, PORTFOLIO_STATE_DIR: state },
    /URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  );
  return { url: server.match[1], child: server.child, name };
}

/** SIGKILL: the replica dies at once, whatever it was doing (its group included). */
export function killReplica(replica) {
  try {
    process.kill(-replica.child.pid, "SIGKILL");
  } catch {}
  return new Promise((resolve) => {
    if (replica.child.exitCode !== null || replica.child.signalCode !== null) resolve();
    else replica.child.once("exit", resolve);
  });
}

/** A clients file for these users (token and delegated user id each), under build/fleet. */
export function clientsFile(users) {
  const dir = join(root, "build", "fleet");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `clients-${randomBytes(3).toString("hex")}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      clients: users.map((u) => ({
        name: u.name,
        token_sha256: sha256Hex(u.token),
        delegated_user: u.delegated_user,
      })),
    }),
  );
  return file;
}

/**
 * The load and chaos runs measure the server, not the quotas a deployment sets (tests cover
 * those): each client's MCP request rate, and its share of the API key's rate, raised out of
 * the way. The sandbox they run against has its own rate limiter off.
 */
export const QUOTAS_RAISED = {
  PORTFOLIO_MCP_RATE_LIMIT_PER_MINUTE: "1000000",
  PORTFOLIO_API_RATE_LIMIT_PER_MINUTE: "1000000",
  PORTFOLIO_API_SHARE_PER_CLIENT: "100",
  PORTFOLIO_API_MAX_IN_FLIGHT_PER_CLIENT: "1000",
};

/**
 * The settings every replica of one deployment shares (same key, secret, contract, clients).
 * `quotas`: QUOTAS_RAISED unless the run measures the quotas themselves ({}: the defaults).
 */
export function deploymentEnv({
  baseUrl,
  credentials,
  clients,
  contractFile,
  redis,
  quotas = QUOTAS_RAISED,
  extra = {},
}) {
  return {
    PORTFOLIO_API_BASE_URL: baseUrl,
    PORTFOLIO_API_KEY_ID: credentials.keyId,
    PORTFOLIO_API_SECRET: credentials.secret,
    PORTFOLIO_MCP_CLIENTS_FILE: clients,
    ...(contractFile ? { PORTFOLIO_CONTRACT_FILE: contractFile } : {}),
    ...(redis ? { PORTFOLIO_REDIS_URL: redis.url, PORTFOLIO_REDIS_PREFIX: redis.prefix } : {}),
    // The same on every replica: a confirmation state sealed by one opens on another.
    PORTFOLIO_STATE_SECRET: "fleet-bench-state-secret-0123456789abcdef",
    PORTFOLIO_CONFIRM: "two-step",
    ...quotas,
    PORTFOLIO_MCP_MAX_SESSIONS_PER_CLIENT: "200",
    PORTFOLIO_LOG_LEVEL: "error",
    ...extra,
  };
}
