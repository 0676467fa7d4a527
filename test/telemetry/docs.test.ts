import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { getMetricsFromStream } from "prom2javascript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startOtlpReceiver } from "../helpers/otlp.js";

/**
 * docs/observability.md as written: its command sends traces to a collector (here a receiver
 * on loopback in the collector's place), doctor prints the line it shows, its collector and
 * Prometheus configurations hold together, and its metrics table names every family /metrics
 * serves.
 */
const root = new URL("../..", import.meta.url).pathname;
const docs = readFileSync(new URL("../../docs/observability.md", import.meta.url), "utf8");
const block = (after: string, language: string) => {
  const from = docs.indexOf(after);
  expect(from, after).toBeGreaterThan(-1);
  const found = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(docs.slice(from));
  expect(found, `${language} block after ${after}`).not.toBeNull();
  return found![1]!;
};
const command = block("## Send them to a collector", "sh");
const doctorLine = block("`portfolio-mcp doctor` says where they go", "").trim();
const collector = parse(block("### The collector", "yaml"));
const scrape = parse(block("Or let Prometheus scrape", "yaml"));
const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith("PORTFOLIO_") && !k.startsWith("OTEL_"),
    ),
  ) as Record<string, string>;
/** The variables the command sets, as `NAME=value \` lines before `npm start`. */
const variables = Object.fromEntries(
  [...command.matchAll(/^(\w+)=(\S+) \\$/gm)].map((m) => [m[1]!, m[2]!]),
);

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let server: ChildProcess | null = null;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  if (server?.pid && server.exitCode === null) {
    const exited = once(server, "exit");
    process.kill(-server.pid, "SIGTERM");
    await exited; // its last spans go out before the receiver closes
  }
  await receiver.close();
});

describe("docs/observability.md", () => {
  it("its command sends a tool call's trace to the collector, and /metrics answers", async () => {
    expect(command).toContain("npm start");
    expect(variables.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://127.0.0.1:4318");
    // The receiver stands where the collector would. npm start's own command, on port 0 (not to
    // collide with a server of yours), run directly so that stopping it stops the server.
    const start = JSON.parse(readFileSync(`${root}package.json`, "utf8")).scripts.start;
    expect(start).toBe("node dist/cli.js serve --http --sandbox");
    const script = command
      .replace("http://127.0.0.1:4318", receiver.url)
      .replace("npm start", `exec ${start} --port 0`);
    server = spawn("bash", ["-euo", "pipefail", "-c", script], {
      cwd: root,
      env: { ...cleanEnv(), OTEL_BSP_SCHEDULE_DELAY: "50" },
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    server.stderr!.setEncoding("utf8");
    const banner = await new Promise<string>((resolve) => {
      server!.stderr!.on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.includes("Stop with Ctrl+C")) resolve(stderr);
      });
      server!.once("exit", () => resolve(stderr));
    });
    const url = /URL\s+(\S+\/mcp)/.exec(banner)?.[1];
    const token = /Token\s+(\S+)/.exec(banner)?.[1];
    expect(url, banner).toBeDefined();
    const client = new Client({ name: "observability-docs", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url!), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    await client.callTool({ name: "list_deals", arguments: { limit: 1 } });
    const span = await receiver.until(() =>
      receiver.spans.find((s) => s.name === "tools/call list_deals"),
    );
    expect(span.instance).toBe(variables.PORTFOLIO_REPLICA_ID);
    expect(receiver.spans.some((s) => s.parentSpanId === span.spanId && s.kind === 3)).toBe(true);

    // Prometheus scrapes the path the configuration names.
    const job = scrape.scrape_configs[0];
    const metrics = await fetch(new URL(job.metrics_path, url));
    expect(metrics.status).toBe(200);
    const families = await getMetricsFromStream(Readable.from([await metrics.text()]));
    // The table names every family served (a new metric is documented, or this fails).
    const documented = new Set(
      [...docs.slice(docs.indexOf("## Metrics")).matchAll(/`([a-z_]+)`/g)].map((m) => m[1]),
    );
    expect(Object.keys(families).filter((name) => !documented.has(name))).toEqual([]);
    expect(Object.keys(families)).toContain("mcp_server_operation_duration_seconds");
    await client.close();
  });

  it("shows the doctor line doctor prints", () => {
    const run = spawnSync(process.execPath, [`${root}dist/cli.js`, "doctor", "--sandbox"], {
      env: { ...cleanEnv(), ...variables, PORTFOLIO_LOG_LEVEL: "error" },
      encoding: "utf8",
    });
    const row = run.stdout.split("\n").find((line) => line.startsWith("telemetry "));
    const words = (line: string | undefined) => line?.trim().split(/\s+/).join(" ");
    expect(words(row)).toBe(words(doctorLine));
  });

  it("configures a collector whose pipelines use what it defines, on the port the command names", () => {
    const http = collector.receivers.otlp.protocols.http.endpoint as string;
    expect(http.split(":").at(-1)).toBe(new URL(variables.OTEL_EXPORTER_OTLP_ENDPOINT!).port);
    for (const [signal, pipeline] of Object.entries<Record<string, string[]>>(
      collector.service.pipelines,
    )) {
      for (const kind of ["receivers", "processors", "exporters"]) {
        for (const name of pipeline[kind] ?? [])
          expect(collector[kind]?.[name], `${signal}: ${kind} ${name}`).toBeDefined();
      }
    }
    expect(Object.keys(collector.service.pipelines).sort()).toEqual(["metrics", "traces"]);
  });
});
