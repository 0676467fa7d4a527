// The burst and its neighbour (issue 22, "fair use of the one key"): one client sends 100
// concurrent all_pages walks while another client makes one read a second. Shared by
// `npm run bench:fair-share` and test/shared/fair-share.test.ts. The servers are the caller's
// (one, or replicas on Redis); the sandbox runs in the caller's process, so its request log
// says what reached the API.
import { setTimeout as sleep } from "node:timers/promises";
import { httpClient } from "./processes.mjs";
import { percentile, round } from "./stats.mjs";

/** Eight pages each (72 operations, 10 a page): 800 upstream requests for 100 walks. */
export const WALK = { name: "list_operations", arguments: { limit: 10, all_pages: true } };
/** The neighbour's ordinary read, on another route, so the log tells the two apart. */
export const READ = { name: "list_deals", arguments: { limit: 5 } };
const WALK_ROUTE = "operations_list";
/** The sentence of a walk refused its turn: the limit, its setting, when to retry. */
const REFUSED =
  /^list_operations was stopped: this client .*\(PORTFOLIO_API_[A-Z_]+.*\); retry in \d+ s/;

/**
 * Runs the measurement. `burst` lists the burster's server URLs (its calls dealt round them,
 * one session each); `neighbour` is the other client's URL. Returns the figures.
 */
export async function burstAndNeighbour({ burst, neighbour, control, calls = 100 }) {
  const auth = (token) => ({ Authorization: `Bearer ${token}` });
  const walkers = await Promise.all(burst.urls.map((url) => httpClient(url, auth(burst.token))));
  const reader = await httpClient(neighbour.url, auth(neighbour.token));
  try {
    // A deployment already running: signed in, sessions open.
    await reader.callTool(READ);
    for (const walker of walkers)
      await walker.callTool({ name: WALK.name, arguments: { limit: 1 } });
    const mark = control.mark();
    const started = Date.now();
    let settled = false;
    const walks = Promise.all(
      Array.from({ length: calls }, (_, n) =>
        outcome(walkers[n % walkers.length].callTool(WALK, undefined, { timeout: 600_000 })),
      ),
    ).finally(() => {
      settled = true;
    });
    const latencies = [];
    const failures = [];
    // One read a second for as long as the burst lasts (the first as it starts).
    while (!settled) {
      const sent = performance.now();
      const read = await outcome(reader.callTool(READ, undefined, { timeout: 60_000 }));
      const ms = performance.now() - sent;
      latencies.push(ms);
      if (read.error) failures.push(read.text);
      await sleep(Math.max(0, 1_000 - ms));
    }
    const results = await walks;
    const requests = control.requests({ since: mark });
    const metrics = await serverMetrics([...new Set([...burst.urls, neighbour.url])]);
    const walkRequests = requests.filter((r) => r.routeId === WALK_ROUTE);
    const refused = results.filter((r) => r.error && REFUSED.test(r.text));
    return {
      seconds: round((Date.now() - started) / 1000, 1),
      neighbour: {
        reads: latencies.length,
        failed: failures.length,
        failures: failures.slice(0, 3),
        p50_ms: round(percentile(latencies, 50), 0),
        p99_ms: round(percentile(latencies, 99), 0),
        max_ms: round(Math.max(...latencies), 0),
      },
      burst: {
        walks: calls,
        answered: results.filter((r) => !r.error).length,
        refused_with_the_sentence: refused.length,
        other_failures: results.filter((r) => r.error && !REFUSED.test(r.text)).map((r) => r.text),
        example_refusal: refused[0]?.text ?? null,
      },
      servers: metrics,
      upstream: {
        requests: requests.length,
        answered_429: requests.filter((r) => r.status === 429).length,
        walk_requests: walkRequests.length,
        walk_requests_in_busiest_second: busiestSecond(walkRequests),
      },
    };
  } finally {
    await Promise.all([...walkers, reader].map((client) => client.close()));
  }
}

/**
 * What the servers say on /metrics, replicas added up: attempts that waited their turn and
 * attempts refused, by reason, and the key's rate each has in force.
 */
async function serverMetrics(urls) {
  const out = { waits: {}, refusals: {}, rate_per_minute: [] };
  for (const url of urls) {
    const text = await (await fetch(new URL("/metrics", url))).text();
    for (const [, kind, reason, value] of text.matchAll(
      /^portfolio_mcp_upstream_(waits|refusals)_total\{reason="(\w+)"\} (\S+)$/gm,
    ))
      out[kind][reason] = (out[kind][reason] ?? 0) + Number(value);
    const rate = /^portfolio_mcp_upstream_rate_per_minute (\S+)$/m.exec(text);
    out.rate_per_minute.push(rate ? Number(rate[1]) : null);
  }
  return out;
}

/** A call's outcome: an error result or a thrown error alike, with its text. */
function outcome(call) {
  return call.then(
    (result) => ({ error: result.isError === true, text: result.content?.[0]?.text ?? "" }),
    (error) => ({ error: true, text: String(error?.message ?? error) }),
  );
}

/** The most requests that arrived within any one second. */
function busiestSecond(requests) {
  const times = requests.map((r) => Date.parse(r.at)).sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last] - times[first] >= 1_000) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}
