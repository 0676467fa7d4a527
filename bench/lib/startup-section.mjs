// npm run bench's figures of issue 26: cold start (stdio and `serve --http`'s first answer,
// without and with the full demo contract, the `bin` and the MCP Bundle) against the bridge and
// the minimal servers on the SDK's 1.x and 2.x lines; the first tools/list against a warm one;
// the MCP Apps views' sizes; resident memory after start and after 10,000 calls.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { firstListVsWarm, interleavedColdStarts, rssMiB } from "./cold-start.mjs";
import { freePort, stdioClient } from "./processes.mjs";
import { round } from "./stats.mjs";

export const COLD_START_TARGET = 0.5;
export const FIRST_LIST_TARGET = 1.2;
export const VIEW_TARGET_KIB = 150;
/** With the key's full contract against without, over stdio (the earlier target, kept). */
export const CONTRACT_COLD_START_TARGET = 1.2;

/**
 * ctx: { node, root, cli, bundled, bridge: { bin, args }, floors: { v1, v2 }, env, contractEnv,
 * floorEnv, runs, memoryCalls, args }
 */
export async function startupSection(ctx, log) {
  const result = {};
  log(`cold start: median of ${ctx.runs}, interleaved`);
  result.cold_start_ms = await coldStarts(ctx);
  log("first tools/list against a warm one");
  result.first_tools_list = {
    dist: await firstListVsWarm(ctx.node, [ctx.cli], ctx.env),
    dist_contract: await firstListVsWarm(ctx.node, [ctx.cli], ctx.contractEnv),
    // The floor: the minimal server on the SDK's 2.x line, one tool, nothing to rehearse.
    floor_v2: await firstListVsWarm(ctx.node, [ctx.floors.v2], ctx.floorEnv),
  };
  result.views = viewSizes(join(ctx.root, "dist", "apps", "views"));
  log(`memory: RSS after start and after ${ctx.memoryCalls.toLocaleString("en")} calls`);
  result.memory_mib = await memory(ctx);
  return result;
}

async function coldStarts(ctx) {
  const { node, cli, bundled, bridge, floors, env, contractEnv, floorEnv } = ctx;
  const token = "bench-cold-start-token-0123456789";
  const auth = { authorization: `Bearer ${token}` };
  const ourHttp = (entry, environment) => async () => {
    const port = await freePort();
    return {
      http: [
        node,
        [entry, "serve", "--http", "--port", String(port)],
        { ...environment, PORTFOLIO_MCP_TOKEN: token },
        `http://127.0.0.1:${port}/mcp`,
        auth,
      ],
    };
  };
  const floorHttp = (file) => async () => {
    const port = await freePort();
    return {
      http: [
        node,
        [file, "--http"],
        { ...floorEnv, FLOOR_PORT: String(port) },
        `http://127.0.0.1:${port}/mcp`,
      ],
    };
  };
  const bridgeHttp = async () => {
    const port = await freePort();
    return {
      http: [
        node,
        [
          bridge.bin,
          ...bridge.args,
          "--transport",
          "http",
          "--port",
          String(port),
          "--host",
          "127.0.0.1",
        ],
        {},
        `http://127.0.0.1:${port}/mcp`,
      ],
    };
  };
  const stdio = (args, environment) => async () => ({ stdio: [node, args, environment] });
  const stdioMs = await interleavedColdStarts(
    {
      dist: stdio([cli], env),
      dist_contract: stdio([cli], contractEnv),
      bundle: stdio([bundled], env),
      bundle_contract: stdio([bundled], contractEnv),
      floor_v1: stdio([floors.v1], floorEnv),
      floor_v2: stdio([floors.v2], floorEnv),
      bridge: stdio([bridge.bin, ...bridge.args, "--transport", "stdio"], {}),
    },
    ctx.runs,
  );
  const httpMs = await interleavedColdStarts(
    {
      dist: ourHttp(cli, env),
      dist_contract: ourHttp(cli, contractEnv),
      bundle: ourHttp(bundled, env),
      bundle_contract: ourHttp(bundled, contractEnv),
      floor_v1: floorHttp(floors.v1),
      floor_v2: floorHttp(floors.v2),
      bridge: bridgeHttp,
    },
    ctx.runs,
  );
  const withRatios = (ms) => ({
    ...ms,
    ratio_vs_bridge: Object.fromEntries(
      Object.entries(ms)
        .filter(([name]) => name !== "bridge")
        .map(([name, value]) => [name, round(value / ms.bridge, 3)]),
    ),
  });
  return { runs: ctx.runs, stdio: withRatios(stdioMs), http: withRatios(httpMs) };
}

/** Each view's bytes, raw and gzipped (what a host fetches and keeps). */
export function viewSizes(dir) {
  return Object.fromEntries(
    readdirSync(dir)
      .filter((name) => name.endsWith(".html"))
      .map((name) => {
        const html = readFileSync(join(dir, name));
        return [
          name.replace(/\.html$/, ""),
          { kib: round(html.length / 1024, 1), gzip_kib: round(gzipSync(html).length / 1024, 1) },
        ];
      }),
  );
}

/** RSS of each server over stdio after its start, then after `memoryCalls` list_operations. */
async function memory(ctx) {
  const { node, cli, bridge, floors, env, floorEnv, memoryCalls, args } = ctx;
  const servers = {
    ours: [[cli], env, "list_operations"],
    floor_v2: [[floors.v2], floorEnv, "list_operations"],
    bridge: [[bridge.bin, ...bridge.args, "--transport", "stdio"], {}, "operations-lst"],
  };
  const out = {};
  for (const [name, [argv, environment, tool]] of Object.entries(servers)) {
    const client = await stdioClient(node, argv, environment);
    // A first call, so that the start is over (ours loads the rest behind its first answer).
    await client.callTool({ name: tool, arguments: args });
    const afterStart = rssMiB(client.pid);
    for (let i = 0; i < memoryCalls; i++) await client.callTool({ name: tool, arguments: args });
    out[name] = { after_start: afterStart, after_calls: rssMiB(client.pid) };
    await client.close();
  }
  out.ratio_vs_bridge = {
    after_start: round(out.ours.after_start / out.bridge.after_start, 2),
    after_calls: round(out.ours.after_calls / out.bridge.after_calls, 2),
  };
  return out;
}

export function startupTargets(r) {
  const cold = r.cold_start_ms;
  const targets = {};
  for (const transport of ["stdio", "http"])
    for (const [path, ratio] of Object.entries(cold[transport].ratio_vs_bridge))
      if (!path.startsWith("floor"))
        targets[`cold start ${transport} ${path} at most ${COLD_START_TARGET}x the bridge's`] =
          ratio <= COLD_START_TARGET;
  for (const path of ["dist", "bundle"])
    targets[
      `cold start stdio ${path} with the full contract within ${CONTRACT_COLD_START_TARGET}x of without`
    ] = cold.stdio[`${path}_contract`] / cold.stdio[path] <= CONTRACT_COLD_START_TARGET;
  for (const [path, f] of Object.entries(r.first_tools_list))
    if (!path.startsWith("floor"))
      targets[`first tools/list (${path}) at most ${FIRST_LIST_TARGET}x a warm one`] =
        f.ratio <= FIRST_LIST_TARGET;
  for (const [view, size] of Object.entries(r.views))
    targets[`view ${view} at most ${VIEW_TARGET_KIB} KiB`] = size.kib <= VIEW_TARGET_KIB;
  return targets;
}

export function printStartup(r) {
  const lines = [];
  const cold = r.cold_start_ms;
  for (const transport of ["stdio", "http"]) {
    const t = cold[transport];
    lines.push(
      `cold start over ${transport === "stdio" ? "stdio (spawn to initialize answered)" : "HTTP (spawn to the first initialize answered)"}, median of ${cold.runs}:`,
    );
    for (const [path, ms] of Object.entries(t)) {
      if (path === "ratio_vs_bridge") continue;
      const ratio = t.ratio_vs_bridge[path];
      lines.push(
        `  ${path.padEnd(16)} ${String(ms).padStart(7)} ms${ratio ? `   ${ratio}x the bridge` : ""}`,
      );
    }
  }
  lines.push(
    `  with the full contract against without (stdio): dist ${round(cold.stdio.dist_contract / cold.stdio.dist, 2)}x, bundle ${round(cold.stdio.bundle_contract / cold.stdio.bundle, 2)}x`,
  );
  for (const [path, f] of Object.entries(r.first_tools_list))
    lines.push(
      `first tools/list (${path}): ${f.first_ms} ms, warm ${f.warm_ms} ms, ratio ${f.ratio}; one after ${f.idle_ms == null ? "?" : `the same pause ${f.idle_ms} ms, the first against it ${f.ratio_vs_idle}`}`,
    );
  lines.push(
    `views: ${Object.entries(r.views)
      .map(([name, s]) => `${name} ${s.kib} KiB (gzip ${s.gzip_kib})`)
      .join(", ")}`,
  );
  const m = r.memory_mib;
  lines.push(
    `RSS (MiB) after start / after calls: ours ${m.ours.after_start} / ${m.ours.after_calls}, floor (SDK 2.x) ${m.floor_v2.after_start} / ${m.floor_v2.after_calls}, bridge ${m.bridge.after_start} / ${m.bridge.after_calls}; ours/bridge ${m.ratio_vs_bridge.after_start} / ${m.ratio_vs_bridge.after_calls}`,
  );
  return lines.join("\n");
}
