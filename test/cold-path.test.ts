import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleSources, DIST, moduleLog, sandboxServerEnv } from "./helpers/module-log.js";
import { initializeRequest } from "./helpers/raw.js";

/**
 * What a stdio start loads (dist/cli.js is the esbuild bundle; dist/bundle-meta.json says which
 * sources each of its chunks holds): before the `initialize` answer only the SDK and the
 * server's identity; once started, nothing of what rarely serves (the sandbox and its data, the
 * XLSX and PDF makers, the OAuth code, node-redis, OpenTelemetry, the write journal on Redis).
 */
const CLI = join(DIST, "cli.js");
const RARELY_USED =
  /^packages\/sandbox\/|node_modules\/(redis|@redis|write-excel-file|read-excel-file|unpdf|jose|@opentelemetry)\/|^src\/transport\/oauth|^src\/state\/redis\.ts$/;
const BEHIND_THE_FIRST_ANSWER = /^src\/(app|server|config)\.ts$|^src\/(domains|inventory|api)\//;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

/** The sources behind the files a start resolved, at its initialize answer and once started. */
async function loadedSources(): Promise<{ atAnswer: string[]; started: string[] }> {
  const { dir, hook, lines: loaded } = moduleLog("cold-path-", { marksAnswer: true });
  const child = spawn(process.execPath, ["--import", hook, CLI], {
    env: sandboxServerEnv(sandbox, dir),
    stdio: ["pipe", "pipe", "ignore"],
  });
  const sources = (untilAnswer = false) => {
    const lines = loaded();
    const answer = lines.indexOf("ANSWER");
    return bundleSources(new Set(untilAnswer ? lines.slice(0, answer) : lines));
  };
  const output = createInterface({ input: child.stdout });
  const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
  try {
    const answers = new Map<number, () => void>();
    output.on("line", (line) => answers.get(JSON.parse(line).id)?.());
    const answered = (id: number) => new Promise<void>((r) => answers.set(id, r));
    send(initializeRequest);
    await answered(1);
    const atAnswer = sources(true);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // A read: the configuration, the API client and the inventory are all in use by then.
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "list_operations", arguments: { limit: 1 } },
    });
    await answered(2);
    return { atAnswer, started: sources() };
  } finally {
    child.kill();
  }
}

describe("the stdio cold path", () => {
  it("answers initialize before loading the rest, and never loads what rarely serves", async () => {
    const { atAnswer, started } = await loadedSources();
    expect(atAnswer.some((s) => s.includes("@modelcontextprotocol/server"))).toBe(true);
    expect(atAnswer.filter((s) => BEHIND_THE_FIRST_ANSWER.test(s))).toEqual([]);
    expect(started.some((s) => s === "src/app.ts")).toBe(true);
    expect(started.filter((s) => RARELY_USED.test(s))).toEqual([]);
  }, 30_000);
});
