import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { availableParallelism } from "node:os";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawnChild, stopChild, trackPid } from "../../scripts/lib/children.mjs";
import { initializeRequest } from "../../scripts/lib/protocol.mjs";
import { cleanEnv, spawnUntil } from "../../scripts/lib/spawn.mjs";

export { cleanEnv, spawnUntil };

/** An SDK client over stdio; the SDK spawns the server, registered here until it is closed. */
export async function stdioClient(command, args, env) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...cleanEnv(), ...env },
    stderr: "ignore",
  });
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close();
    throw error;
  }
  client.onclose = trackPid(transport.pid);
  client.pid = transport.pid;
  return client;
}

export async function httpClient(url, headers = {}) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    fetch: ownSignals,
  });
  await client.connect(transport);
  return client;
}

/**
 * The fetch a Streamable HTTP client transport is given (the SDK's 1.x and 2.x lines alike):
 * every request of a transport carries one shared AbortSignal, and undici keeps a listener on it
 * per request until the request is garbage-collected; past ten it raises the signal's limit to
 * 1,500 (whatever was set before), and thousands of calls in flight outrun the collector: Node
 * then warns on every call. A signal of its own for each request, following the shared one
 * (`AbortSignal.any`), leaves no listener on it, and closing the transport still aborts all.
 */
export function ownSignals(url, init) {
  return fetch(url, init?.signal ? { ...init, signal: AbortSignal.any([init.signal]) } : init);
}

export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** What a command prints on stdout, once it has exited with 0 (registered while it runs). */
export function output(command, args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawnChild(command, args, {
      env: { ...cleanEnv(), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out = [];
    let err = "";
    child.stdout.on("data", (chunk) => out.push(chunk));
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("error", reject);
    // "close", not "exit": stdout may still hold the end of the output when the process exits.
    child.on("close", (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out).toString("utf8"));
      else reject(new Error(`${command} ${args.join(" ")} exited (${code ?? signal}): ${err}`));
    });
  });
}

/** Milliseconds from spawn to the `initialize` answer over stdio. */
export function timeToInitialize(command, args, env) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawnChild(command, args, {
      env: { ...cleanEnv(), ...env },
      stdio: ["pipe", "pipe", "ignore"],
    });
    let answered = false;
    createInterface({ input: child.stdout }).on("line", (line) => {
      try {
        if (answered || JSON.parse(line).id !== 1) return;
      } catch {
        return;
      }
      answered = true;
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // Gone before the next start: a process still exiting slows the one that follows it
      // (seen: the MCP Bundle's build, always started after the `bin` with the contract,
      // 35-40 ms slower than the `bin`; started alone, the two are alike).
      stopChild(child).then(() => resolve(ms), reject);
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (!answered)
        reject(new Error(`${command} exited (${code ?? signal}) before answering initialize`));
    });
    child.stdin.write(`${JSON.stringify(initializeRequest("bench"))}\n`);
  });
}

/**
 * The sandbox in its own process; `stats()` asks it for its counters. The sandbox exiting
 * before close() is an error: every figure after it would be wrong.
 */
export function sandboxProcess(options) {
  return new Promise((resolve, reject) => {
    const child = spawnChild(
      process.execPath,
      [new URL("./sandbox-process.mjs", import.meta.url).pathname, JSON.stringify(options)],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const waiting = [];
    let closing = false;
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line);
      if (message.baseUrl) {
        resolve({
          ...message,
          pid: child.pid,
          stats: () =>
            new Promise((r) => {
              waiting.push(r);
              child.stdin.write("stats\n");
            }),
          /** Adds a fault rule (see packages/sandbox/src/faults.ts); resolves to its id. */
          fault: (rule) =>
            new Promise((r) => {
              waiting.push((reply) => r(reply.fault));
              child.stdin.write(`${JSON.stringify({ fault: rule })}\n`);
            }),
          close: () =>
            new Promise((r) => {
              closing = true;
              child.on("exit", r);
              child.stdin.end();
            }),
        });
      } else waiting.shift()?.(message);
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (!closing) throw new Error(`the sandbox process exited (${code ?? signal})`);
    });
  });
}

/**
 * `[command, args before the script]` that run `node` on the machine's last core (Linux
 * taskset), or node as it is where there is no taskset or one core. Servers compared call by
 * call share one core, so that none gains or loses by where the scheduler puts it beside the
 * sandbox and the client (seen: one of four servers 10% slower a call, whichever started last).
 */
export function pinnedToOneCore(node) {
  const cores = availableParallelism();
  if (cores < 2 || spawnSync("taskset", ["-c", "0", "true"]).status !== 0) return [node, []];
  return ["taskset", ["-c", String(cores - 1), node]];
}
