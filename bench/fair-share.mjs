#!/usr/bin/env node
// npm run bench:fair-share: fair use of the one API key (issue 22). One client sends 100
// concurrent all_pages walks (800 upstream requests) while another client makes one read a
// second, through a `serve --http` with the default limits; prints the neighbour's latencies,
// what reached the API (429s included) and what became of the walks. The sandbox (its own
// limits: 300 at once, 100 a second, a ban after 20 strikes) runs in this process. Writes
// build/fair-share.json (or --out).
//
// With --fleet: two replicas sharing one Redis (--redis URL, default the local one; a fresh key
// prefix, deleted at the end), the walks dealt round both, against a sandbox that allows
// exactly the key's rate (10 a second, 10 at once: PORTFOLIO_API_RATE_LIMIT_PER_MINUTE=600).
// Writes build/fair-share-fleet.json. --max-wait SECONDS shortens the longest a walk waits for
// its turns (PORTFOLIO_MAX_RETRY_WAIT_SECONDS, 30 by default: the run takes about as long).
//   npm run bench:fair-share [-- --fleet] [--redis URL] [--max-wait SECONDS] [--out FILE]
import { parseArgs } from "node:util";
import { DEMO_USERS, startSandbox } from "@portfolio-mcp/sandbox";
import { stopAndExit, stopChildren } from "../scripts/lib/children.mjs";
import { burstAndNeighbour } from "./lib/fair-share.mjs";
import {
  clientsFile,
  DEFAULT_REDIS_URL,
  deploymentEnv,
  fleetRedis,
  startReplica,
} from "./lib/fleet.mjs";
import { writeResults } from "./lib/results.mjs";

const { values: options } = parseArgs({
  options: {
    out: { type: "string" },
    fleet: { type: "boolean", default: false },
    redis: { type: "string", default: DEFAULT_REDIS_URL },
    "max-wait": { type: "string" },
  },
});
setTimeout(() => stopAndExit(1, "bench:fair-share: gave up after 5 min"), 300_000).unref();

const burster = {
  name: "burster",
  token: "fair-share-bench-burster-0123456789",
  delegated_user: { email: "camille.martin@aurore-capital.example" },
};
const neighbour = {
  name: "neighbour",
  token: "fair-share-bench-neighbour-0123456789",
  delegated_user: { id: DEMO_USERS.thomas },
};

const sandbox = await startSandbox(
  options.fleet ? { rateLimit: { burst: 10, perSecond: 10 }, requestLogLimit: 50_000 } : {},
);
const shared = options.fleet ? await fleetRedis(options.redis, "bench:fair-share") : null;
const env = deploymentEnv({
  baseUrl: sandbox.baseUrl,
  credentials: sandbox.credentials,
  clients: clientsFile([burster, neighbour]),
  redis: shared,
  quotas: {}, // what is measured: the defaults a deployment gets
  extra: options["max-wait"] ? { PORTFOLIO_MAX_RETRY_WAIT_SECONDS: options["max-wait"] } : {},
});
const replicas = await Promise.all(
  (options.fleet ? ["fair-1", "fair-2"] : ["fair"]).map((name) => startReplica(env, name)),
);
process.stderr.write(
  `bench:fair-share: 100 concurrent all_pages walks from one client, one read a second from another (${replicas.length} replica${replicas.length > 1 ? "s on Redis" : ""}) ...\n`,
);
const report = await burstAndNeighbour({
  burst: { urls: replicas.map((r) => r.url), token: burster.token },
  neighbour: { url: replicas.at(-1).url, token: neighbour.token },
  control: sandbox.control,
});
await stopChildren();
await shared?.drop();
await sandbox.close();

const { neighbour: n, burst: b, upstream: u } = report;
process.stdout.write(
  `${[
    `the neighbour    ${n.reads} reads, ${n.failed} failed; p50 ${n.p50_ms} ms, p99 ${n.p99_ms} ms, max ${n.max_ms} ms`,
    `the walker       ${b.answered} of ${b.walks} walks answered, ${b.refused_with_the_sentence} refused with when to retry, ${b.other_failures.length} other failures`,
    `the API saw      ${u.requests} requests, ${u.answered_429} answered 429; walks: ${u.walk_requests}, at most ${u.walk_requests_in_busiest_second} in one second`,
    `took             ${report.seconds} s`,
    b.example_refusal ? `a refusal reads  ${b.example_refusal}` : null,
  ]
    .filter(Boolean)
    .join("\n")}\n`,
);
writeResults(report, options, {
  fresh: options.fleet ? "build/fair-share-fleet.json" : "build/fair-share.json",
});
