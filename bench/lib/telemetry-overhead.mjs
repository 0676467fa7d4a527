// What the audit trail and tracing cost per call (issue 24): the same stdio server four ways,
// interleaved, against one sandbox: everything off; the audit trail on; the audit trail with
// tracing to a collector at 0% sampling (OTLP export on, no trace sampled: the setting to run
// with); the same at 100%. The collector is an OTLP/HTTP endpoint on loopback that accepts and
// counts what it is sent. Used by `npm run bench` and `npm run bench:telemetry`.
import { once } from "node:events";
import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { cpuOf } from "./cold-start.mjs";
import { pinnedToOneCore, stdioClient } from "./processes.mjs";
import { interleaved, round, summary } from "./stats.mjs";

export const TELEMETRY_TARGET = 1.05;

/**
 * `env` configures the server (API, key, user); `work` is a scratch directory. Returns p50/p99 of
 * each variant, their ratios to "off", and what the collector received. Each of `rounds` starts
 * the four servers afresh: a process's own luck (where it runs, how its code is compiled) moves
 * its figures by a few per cent, so each figure is the median of the rounds', and each ratio the
 * median of the rounds' ratios.
 */
export async function telemetryOverhead({ node, cli, env, work, calls, block, args, rounds = 4 }) {
  const collector = await otlpCollector();
  try {
    const tables = [];
    for (let r = 0; r < rounds; r++)
      tables.push(await oneRound({ node, cli, env, work, calls, block, args, collector, turn: r }));
    const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const table = {};
    const figures = ["p50", "p99", "cpu_us"].filter((f) => tables.every((t) => t.off[f] != null));
    for (const name of Object.keys(tables[0])) {
      table[name] = { ...tables[0][name] };
      for (const f of figures) table[name][f] = median(tables.map((t) => t[name][f]));
      if (name !== "off")
        table[name].vs_off = Object.fromEntries(
          figures.map((f) => [f, round(median(tables.map((t) => t[name][f] / t.off[f])), 3)]),
        );
    }
    const each = Object.fromEntries(
      Object.keys(table)
        .filter((name) => name !== "off")
        .map((name) => [name, tables.map((t) => round(t[name].p50 / t.off.p50, 3))]),
    );
    return {
      ...table,
      rounds,
      p50_ratio_each_round: each,
      collector: collector.received(),
      target_p50: TELEMETRY_TARGET,
    };
  } finally {
    await collector.close();
  }
}

/** One round: the four servers started afresh, their calls interleaved. */
async function oneRound({ node, cli, env, work, calls, block, args, collector, turn }) {
  const dir = (name) => {
    const path = join(work, `telemetry-${name}`);
    mkdirSync(path, { recursive: true });
    return path;
  };
  const audited = (name) => ({
    PORTFOLIO_STATE_DIR: dir(name),
    PORTFOLIO_AUDIT_FILE: join(dir(name), "audit.jsonl"),
  });
  const traced = (ratio) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_TRACES_SAMPLER: "traceidratio",
    OTEL_TRACES_SAMPLER_ARG: String(ratio),
    OTEL_BSP_SCHEDULE_DELAY: "1000",
  });
  const variants = {
    off: { PORTFOLIO_STATE_DIR: dir("off"), PORTFOLIO_AUDIT_FILE: "off" },
    audit: audited("audit"),
    audit_traced_0: { ...audited("traced-0"), ...traced(0) },
    audit_traced_100: { ...audited("traced-100"), ...traced(1) },
  };
  const clients = {};
  const [command, prefix] = pinnedToOneCore(node);
  try {
    // Each round starts them in another order: where a process lands moves its figures by a
    // few per cent (seen: the last started ran 10% slower, whichever it was).
    const names = Object.keys(variants);
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + turn) % names.length];
      clients[name] = await stdioClient(command, [...prefix, cli], { ...env, ...variants[name] });
    }
    const call = (client) => async () => {
      const result = await client.callTool({ name: "list_operations", arguments: args });
      if (result.isError) throw new Error(`list_operations failed: ${JSON.stringify(result)}`);
    };
    // Each server's CPU time over the run (all threads): only one is called at a time, so what
    // it used is its calls' (and its idle timers', alike in all four).
    const cpuBefore = Object.fromEntries(
      Object.entries(clients).map(([name, client]) => [name, cpuOf(client.pid)?.cpu_all]),
    );
    const samples = await interleaved(
      Object.fromEntries(Object.entries(clients).map(([name, client]) => [name, call(client)])),
      { calls, block },
    );
    return Object.fromEntries(
      Object.entries(samples).map(([name, s]) => {
        const used = cpuOf(clients[name].pid)?.cpu_all;
        const cpu_us =
          used === undefined ? null : round(((used - cpuBefore[name]) * 1000) / s.length, 0);
        return [name, { ...summary(s), cpu_us }];
      }),
    );
  } finally {
    for (const client of Object.values(clients)) await client.close();
  }
}

/** An OTLP/HTTP endpoint that answers every export with success and counts them. */
async function otlpCollector() {
  const received = { trace_exports: 0, metric_exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on("data", (chunk) => {
      received.bytes += chunk.length;
    });
    req.on("end", () => {
      if (req.url === "/v1/traces") received.trace_exports++;
      if (req.url === "/v1/metrics") received.metric_exports++;
      res.writeHead(200, { "content-type": req.headers["content-type"] ?? "" }).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    received: () => ({ ...received }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The figure as one paragraph of the bench's printout. */
export function printTelemetry(t) {
  const cpu = (v) => (v.cpu_us == null ? "" : `   CPU ${String(v.cpu_us).padStart(5)} us`);
  const ratios = (r) =>
    `   x${r.p50} p50, x${r.p99} p99${r.cpu_us == null ? "" : `, x${r.cpu_us} CPU`}`;
  const row = (label, v) =>
    `  ${label.padEnd(30)} p50 ${String(v.p50).padStart(7)} ms   p99 ${String(v.p99).padStart(7)} ms${cpu(v)}${v.vs_off ? ratios(v.vs_off) : ""}`;
  return [
    `telemetry overhead per call (list_operations over stdio, ${t.off.n} calls each, median of ${t.rounds} rounds; CPU: the server's own per call):`,
    row("off", t.off),
    row("audit trail", t.audit),
    row("audit + tracing, 0% sampled", t.audit_traced_0),
    row("audit + tracing, 100% sampled", t.audit_traced_100),
    `  p50 against off, round by round (each round starts the servers in another order): ${Object.entries(
      t.p50_ratio_each_round,
    )
      .map(([name, ratios]) => `${name} ${ratios.join(" ")}`)
      .join("; ")}`,
    `  the collector received ${t.collector.trace_exports} trace and ${t.collector.metric_exports} metric exports (${t.collector.bytes} bytes)`,
  ].join("\n");
}
