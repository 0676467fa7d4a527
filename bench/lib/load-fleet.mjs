// `npm run load -- --fleet`: the same client load (100 sessions x 20 reads, two users) through
// one replica and through three replicas sharing one Redis, sessions dealt round the replicas
// as a balancer without affinity would, beside one replica without Redis (what sharing costs).
// After a warm-up, each configuration runs three times, in rotating order, so that machine
// drift hits all alike.
import os from "node:os";
import { DEMO_KEYS, DEMO_USERS } from "@portfolio-mcp/sandbox";
import { stopChildren } from "../../scripts/lib/children.mjs";
import { clientsFile, deploymentEnv, fleetRedis, startReplica } from "./fleet.mjs";
import { readMix } from "./load-mix.mjs";
import { httpClient, sandboxProcess } from "./processes.mjs";
import { writeResults } from "./results.mjs";
import { percentile, round } from "./stats.mjs";

const SESSIONS = 100;
const CALLS_PER_SESSION = 20;
const ROUNDS = 3;
/** Calls per configuration before the timed rounds: every replica compiled its hot paths. */
const WARM_UP_SESSIONS = 30;

export async function runLoadFleet(options, log) {
  const shared = await fleetRedis(options.redis, "load");
  const sandbox = await sandboxProcess({ rateLimit: false, requestLogLimit: 100 });
  const users = [
    {
      name: "camille",
      token: "load-fleet-camille-0123456789",
      delegated_user: { id: DEMO_USERS.camille },
    },
    {
      name: "julien",
      token: "load-fleet-julien-0123456789",
      delegated_user: { id: DEMO_USERS.julien },
    },
  ];
  const common = {
    baseUrl: sandbox.baseUrl,
    credentials: { keyId: DEMO_KEYS.full.keyId, secret: DEMO_KEYS.full.secret },
    clients: clientsFile(users),
  };
  log("load --fleet: starting 1 replica without Redis and 3 on Redis ...");
  const [alone, ...fleet] = await Promise.all([
    startReplica(deploymentEnv(common), "load-alone"),
    ...[0, 1, 2].map((n) => startReplica(deploymentEnv({ ...common, redis: shared }), `load-${n}`)),
  ]);
  const configurations = {
    "1 replica, no Redis": [alone],
    "1 replica on Redis": [fleet[0]],
    "3 replicas on Redis": fleet,
  };

  const connect = (replica, user) =>
    httpClient(replica.url, { authorization: `Bearer ${user.token}` });
  const probe = await connect(fleet[0], users[0]);
  const calls = await readMix(probe);

  await probe.close();

  const cpuSeconds = async (replicas) => {
    let total = 0;
    for (const r of replicas) {
      const text = await (await fetch(r.url.replace(/\/mcp$/, "/metrics"))).text();
      total += Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1]);
    }
    return total;
  };

  /** `sessions` sessions at once, session i on replica i mod n, each making its calls in turn. */
  async function phase(replicas, sessions = SESSIONS) {
    const latencies = [];
    const errors = [];
    const cpuBefore = await cpuSeconds(replicas);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: sessions }, async (_, i) => {
        const client = await connect(replicas[i % replicas.length], users[i % users.length]);
        for (let call = 0; call < CALLS_PER_SESSION; call++) {
          const [name, args] = calls[(call + i) % calls.length];
          const callStarted = performance.now();
          try {
            const reply = await client.callTool({ name, arguments: args });
            if (reply.isError) errors.push(`${name}: ${reply.content[0]?.text}`);
          } catch (error) {
            errors.push(`${name}: ${error.message}`);
          }
          latencies.push(performance.now() - callStarted);
        }
        // Ended for the server too (DELETE), as a client that is done would: sessions free up.
        await client.transport?.terminateSession();
        await client.close();
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = (await cpuSeconds(replicas)) - cpuBefore;
    return {
      calls_per_s: Math.round(latencies.length / seconds),
      p50_ms: round(percentile(latencies, 50), 1),
      p99_ms: round(percentile(latencies, 99), 1),
      server_cpu_ms_per_call: round((cpu * 1000) / latencies.length, 2),
      errors,
    };
  }

  const names = Object.keys(configurations);
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  log("load --fleet: warming every replica up ...");
  for (const name of names) await phase(configurations[name], WARM_UP_SESSIONS);
  for (let n = 0; n < ROUNDS; n++) {
    for (const name of names.map((_, i) => names[(i + n) % names.length])) {
      log(`load --fleet: ${name}, round ${n + 1} ...`);
      runs[name].push(await phase(configurations[name]));
    }
  }
  await stopChildren([alone, ...fleet].map((r) => r.child.pid));
  await sandbox.close();
  await shared.drop();

  const summary = (list) => ({
    calls_per_s: list.map((r) => r.calls_per_s),
    calls_per_s_mean: Math.round(list.reduce((s, r) => s + r.calls_per_s, 0) / list.length),
    p50_ms: list.map((r) => r.p50_ms),
    p99_ms: list.map((r) => r.p99_ms),
    server_cpu_ms_per_call: list.map((r) => r.server_cpu_ms_per_call),
    errors: list.reduce((s, r) => s + r.errors.length, 0),
  });
  const results = Object.fromEntries(names.map((name) => [name, summary(runs[name])]));
  const report = {
    cores: os.availableParallelism(),
    sessions: SESSIONS,
    calls_per_session: CALLS_PER_SESSION,
    rounds: ROUNDS,
    configurations: results,
    three_over_one_on_redis: round(
      results["3 replicas on Redis"].calls_per_s_mean /
        results["1 replica on Redis"].calls_per_s_mean,
      2,
    ),
    note: `${os.availableParallelism()} cores shared by the load client, the sandbox, Redis and every replica: more replicas add processes, not cores`,
  };
  const lines = [
    `${SESSIONS} concurrent sessions x ${CALLS_PER_SESSION} tool calls, ${ROUNDS} rounds each (loopback; ${report.note})`,
    ...names.map((name) => {
      const r = results[name];
      return `  ${name.padEnd(22)} ${r.calls_per_s.join(", ")} calls/s (mean ${r.calls_per_s_mean}); p50 ${r.p50_ms.join(", ")} ms; p99 ${r.p99_ms.join(", ")} ms; server CPU ${r.server_cpu_ms_per_call.join(", ")} ms/call; ${r.errors} errors`;
    }),
    `  3 replicas / 1 replica on Redis: ${report.three_over_one_on_redis}x`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  writeResults(report, options, {
    fresh: "build/load-fleet.json",
    reference: "bench/load-fleet.json",
  });
  for (const error of names.flatMap((n) => runs[n].flatMap((r) => r.errors)).slice(0, 10))
    log(`  error: ${error}`);
  process.exitCode = names.every((n) => results[n].errors === 0) ? 0 : 1;
}
