import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { initializeRequest } from "./protocol.mjs";

export const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")));

export async function stdioClient(command, args, env) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command, args, env: { ...cleanEnv(), ...env }, stderr: "ignore" }),
  );
  return client;
}

export async function httpClient(url, headers = {}) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  return client;
}

/** Spawns a process and resolves once its stderr matches, with the match and stderr so far. */
export function spawnUntil(command, args, env, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...cleanEnv(), ...env } });
    let seen = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      seen += chunk;
      const match = pattern.exec(seen);
      if (match) resolve({ child, match, stderr: seen });
    });
    child.on("exit", (code) =>
      reject(new Error(`${command} exited (${code}): ${seen.slice(-500)}`)),
    );
  });
}

export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Milliseconds from spawn to the `initialize` answer over stdio. */
export function timeToInitialize(command, args, env) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { env: { ...cleanEnv(), ...env } });
    createInterface({ input: child.stdout }).on("line", (line) => {
      try {
        if (JSON.parse(line).id === 1) {
          resolve(Number(process.hrtime.bigint() - started) / 1e6);
          child.kill();
        }
      } catch {}
    });
    child.on("error", reject);
    child.stdin.write(`${JSON.stringify(initializeRequest("bench"))}\n`);
  });
}

/** The sandbox in its own process; `stats()` asks it for its counters. */
export function sandboxProcess(options) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [new URL("./sandbox-process.mjs", import.meta.url).pathname, JSON.stringify(options)],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    const waiting = [];
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line);
      if (message.baseUrl) {
        resolve({
          ...message,
          stats: () =>
            new Promise((r) => {
              waiting.push(r);
              child.stdin.write("stats\n");
            }),
          close: () =>
            new Promise((r) => {
              child.on("exit", r);
              child.stdin.end();
            }),
        });
      } else waiting.shift()?.(message);
    });
    child.on("error", reject);
  });
}
