// Cold start, as a client sees it: spawn to the `initialize` answer over stdio, and spawn to the
// first answered `initialize` over Streamable HTTP; the first tools/list after a start against
// a warm one; a process's resident memory.
import { readdirSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { spawnChild, stopChild } from "../../scripts/lib/children.mjs";
import { initializeRequest } from "../../scripts/lib/protocol.mjs";
import { cleanEnv, timeToInitialize } from "./processes.mjs";
import { percentile, round } from "./stats.mjs";

export { timeToInitialize };

/**
 * Milliseconds from spawn to the first answered `initialize` POST at `url`: the request is sent
 * again every few milliseconds while nothing listens (what a client that retries sees).
 * `atAnswer(pid)` is called at the answer, while the server still runs (to read its CPU time).
 */
export async function timeToHttpAnswer(command, args, env, url, headers = {}, { atAnswer } = {}) {
  const started = process.hrtime.bigint();
  const child = spawnChild(command, args, {
    env: { ...cleanEnv(), ...env },
    stdio: ["ignore", "ignore", "ignore"],
  });
  let exited = false;
  child.on("exit", () => {
    exited = true;
  });
  try {
    for (;;) {
      if (exited) throw new Error(`${command} ${args.join(" ")} exited before answering`);
      try {
        const res = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
            ...headers,
          },
          body: JSON.stringify(initializeRequest("bench")),
        });
        const text = await res.text();
        if (res.status !== 200 || !text.includes('"protocolVersion"'))
          throw new Error(`${command}: initialize answered ${res.status}: ${text.slice(0, 200)}`);
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        atAnswer?.(child.pid);
        return ms;
      } catch (error) {
        if (error?.cause?.code !== "ECONNREFUSED" && error?.cause?.code !== "ECONNRESET")
          throw error;
        await sleep(2);
      }
    }
  } finally {
    await stopChild(child);
  }
}

/**
 * Runs every path `runs` times, taking turns (a slow moment of the machine falls on all of them
 * alike), and gives each one's median. A path is { stdio: [command, args, env] } or
 * { http: [command, args, env, url, headers] } (args may be a function of the run, for ports).
 */
export async function interleavedColdStarts(paths, runs) {
  const samples = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
  for (let i = 0; i < runs; i++) {
    const names = Object.keys(paths);
    // Each run starts with another path, every other run in reverse: none always follows the
    // same one.
    const rotated = [...names.slice(i % names.length), ...names.slice(0, i % names.length)];
    const order = i % 2 === 0 ? rotated : rotated.reverse();
    for (const name of order) {
      const path = await paths[name]();
      samples[name].push(
        path.stdio ? await timeToInitialize(...path.stdio) : await timeToHttpAnswer(...path.http),
      );
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([name, s]) => [name, round(percentile(s, 50), 1)]),
  );
}

/**
 * The first tools/list of a fresh stdio server, `settleMs` after its `initialize` answer (a user's
 * first question comes after the window has opened), against the median of the next `warm`, and
 * against one more sent after the same `settleMs` idle: what any request after a pause costs on
 * this machine, the first or not (`idle_ms`; the ratio against it says what is left of being the
 * first).
 */
export function firstListVsWarm(command, args, env, { settleMs = 1500, warm = 20 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawnChild(command, args, {
      env: { ...cleanEnv(), ...env },
      stdio: ["pipe", "pipe", "ignore"],
    });
    const send = (m) => child.stdin.write(`${JSON.stringify(m)}\n`);
    const times = [];
    let sent = 0n;
    let next = 2;
    const list = () => {
      sent = process.hrtime.bigint();
      send({ jsonrpc: "2.0", id: next++, method: "tools/list" });
    };
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line);
      if (message.id === 1) {
        send({ jsonrpc: "2.0", method: "notifications/initialized" });
        setTimeout(list, settleMs);
        return;
      }
      if (typeof message.id !== "number") return;
      if (!message.result?.tools?.length) reject(new Error(`tools/list failed: ${line}`));
      times.push(Number(process.hrtime.bigint() - sent) / 1e6);
      if (times.length <= warm) return void list();
      if (times.length === warm + 1) return void setTimeout(list, settleMs);
      void stopChild(child);
      const first = times[0];
      const warmMedian = percentile(times.slice(1, warm + 1), 50);
      const idle = times[warm + 1];
      resolve({
        first_ms: round(first, 2),
        warm_ms: round(warmMedian, 2),
        ratio: round(first / warmMedian, 2),
        idle_ms: round(idle, 2),
        ratio_vs_idle: round(first / idle, 2),
      });
    });
    child.on("error", reject);
    send(initializeRequest("bench"));
  });
}

/**
 * CPU milliseconds a process has run so far, its main thread's and all its threads' (Linux
 * /proc schedstat); null where there is no /proc. Less moved by the machine's load than the
 * wall clock.
 */
export function cpuOf(pid) {
  let all = 0;
  let main = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const ns = Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      all += ns;
      if (task === String(pid)) main = ns;
    }
  } catch {
    return null;
  }
  return { cpu_main: main / 1e6, cpu_all: all / 1e6 };
}

/** Resident memory of a process in MiB (Linux /proc). */
export function rssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return round(kib / 1024, 1);
}
