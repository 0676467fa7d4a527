import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Sandbox } from "@portfolio-mcp/sandbox";

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

/** Every server started and not yet stopped: a test that times out leaves none behind. */
const running = new Set<ChildProcessWithoutNullStreams>();

/** Stops whatever a test left running (for afterEach: a timed-out test skips its finally). */
export async function stopRawStdio(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      running.delete(child);
      child.kill("SIGTERM");
      if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
    }),
  );
}

/** The built server over stdio, spoken to in raw JSON-RPC: what no SDK client would send. */
export function rawStdio(sandbox: Sandbox, env: Record<string, string> = {}) {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  );
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI], {
    env: {
      ...base,
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
      PORTFOLIO_API_SECRET: sandbox.credentials.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: sandbox.credentials.delegatedUserEmail,
      PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "stdio-hostile-")),
      PORTFOLIO_LOG_LEVEL: "warn",
      ...env,
    },
  });
  running.add(child);
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  const messages: any[] = [];
  const waiters: Array<{ match: (m: any) => boolean; resolve: (m: any) => void }> = [];
  const all: any[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line); // anything but protocol on stdout fails here
    all.push(message);
    const waiter = waiters.find((w) => w.match(message));
    if (waiter) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(message);
    } else messages.push(message);
  });
  const next = (match: (m: any) => boolean) =>
    new Promise<any>((resolve) => {
      const seen = messages.find(match);
      if (seen) {
        messages.splice(messages.indexOf(seen), 1);
        resolve(seen);
      } else waiters.push({ match, resolve });
    });
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  return {
    child,
    send,
    next,
    stderr: () => stderr,
    /** Every message the server wrote, in order. */
    all: () => all,
    async initialize(capabilities: object = {}) {
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities,
          clientInfo: { name: "stdio-hostile", version: "1" },
        },
      });
      await next((m) => m.id === 1);
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
    },
    async stop() {
      running.delete(child);
      child.kill("SIGTERM");
      if (child.exitCode === null) await once(child, "exit");
    },
  };
}
