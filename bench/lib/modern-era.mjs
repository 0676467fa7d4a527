// The 2026-07-28 era (per-request envelopes, no session), through the SDK's 2.x client pinned to
// it: list_operations through our server and the minimal server on the SDK's 2.x line, over
// stdio and Streamable HTTP; p50 interleaved, and 50 calls in flight, best of three rounds.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { trackPid } from "../../scripts/lib/children.mjs";
import { cleanEnv, ownSignals } from "./processes.mjs";
import { interleaved, percentile, round, summary } from "./stats.mjs";

const ERA = "2026-07-28";

function modernClient() {
  return new Client(
    { name: "bench-modern", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: ERA } } },
  );
}

export async function modernStdioClient(command, args, env) {
  const client = modernClient();
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...cleanEnv(), ...env },
    stderr: "ignore",
  });
  await client.connect(transport);
  client.onclose = trackPid(transport.pid);
  return client;
}

export async function modernHttpClient(url, headers = {}) {
  const client = modernClient();
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    fetch: ownSignals,
  });
  await client.connect(transport);
  return client;
}

/** Calls in flight for `seconds`, three rounds taking turns; each path's best round. */
export async function bestOfThree(paths, { callers, seconds }) {
  const rounds = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
  for (let round = 0; round < 3; round++)
    for (const [name, call] of Object.entries(paths))
      rounds[name].push(await saturate(call, callers, seconds));
  return Object.fromEntries(
    Object.entries(rounds).map(([name, r]) => [
      name,
      r.reduce((best, x) => (x.calls_per_s > best.calls_per_s ? x : best)),
    ]),
  );
}

async function saturate(call, callers, seconds) {
  const samples = [];
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (Date.now() < deadline) {
        const started = process.hrtime.bigint();
        await call();
        samples.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }),
  );
  return {
    calls_per_s: round(samples.length / seconds, 1),
    p50: round(percentile(samples, 50), 2),
    p99: round(percentile(samples, 99), 2),
  };
}

/**
 * ctx: { ours: { stdio: [command, args, env], http: [url, headers] }, floor: {...}, calls, block,
 * callers, seconds, args }. Returns p50s, throughputs and the ratios ours / floor.
 */
export async function modernEra(ctx) {
  const tool = (client) => async () => {
    const result = await client.callTool({ name: "list_operations", arguments: ctx.args });
    if (result.isError)
      throw new Error(`list_operations failed: ${JSON.stringify(result.content)}`);
  };
  const out = {};
  for (const transport of ["stdio", "http"]) {
    const clients = {
      ours:
        transport === "stdio"
          ? await modernStdioClient(...ctx.ours.stdio)
          : await modernHttpClient(...ctx.ours.http),
      floor_v2:
        transport === "stdio"
          ? await modernStdioClient(...ctx.floor.stdio)
          : await modernHttpClient(...ctx.floor.http),
    };
    for (const client of Object.values(clients))
      if (client.getNegotiatedProtocolVersion() !== ERA)
        throw new Error(`a bench client landed on ${client.getNegotiatedProtocolVersion()}`);
    const calls = { ours: tool(clients.ours), floor_v2: tool(clients.floor_v2) };
    const samples = await interleaved(calls, { calls: ctx.calls, block: ctx.block });
    const latency = { ours: summary(samples.ours), floor_v2: summary(samples.floor_v2) };
    const throughput = await bestOfThree(calls, ctx);
    out[transport] = {
      latency,
      throughput,
      ratios: {
        p50: round(latency.ours.p50 / latency.floor_v2.p50, 3),
        throughput: round(throughput.ours.calls_per_s / throughput.floor_v2.calls_per_s, 3),
      },
    };
    for (const client of Object.values(clients)) await client.close();
  }
  return out;
}

export function printModern(r) {
  const lines = [`${ERA} era (SDK 2.x client), ours against the minimal server on SDK 2.x:`];
  for (const [transport, t] of Object.entries(r))
    lines.push(
      `  ${transport.padEnd(5)} p50 ${t.latency.ours.p50} ms vs ${t.latency.floor_v2.p50} ms (ratio ${t.ratios.p50}); 50 in flight, best of 3: ${t.throughput.ours.calls_per_s}/s vs ${t.throughput.floor_v2.calls_per_s}/s (ratio ${t.ratios.throughput})`,
    );
  return lines.join("\n");
}
