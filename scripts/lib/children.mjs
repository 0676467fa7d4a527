// The processes a bench, chaos or load script starts, stopped however the script ends: normal
// end (the script awaits stopChildren()), thrown error, unhandled rejection, Ctrl+C (SIGINT),
// SIGTERM, or process.exit() from anywhere. Importing this module installs the handlers.
// Clean-ups that are not processes (atStop) run on the same paths, except process.exit(),
// which leaves no time for asynchronous work.
//
// spawnChild() gives each child its own process group, so that what the child starts in turn
// (npx and the package it runs, for one) is stopped with it. Children spawned by a library
// (the MCP SDK's stdio transport) are registered by pid with trackPid().
import { spawn } from "node:child_process";

/** pid -> whether the pid is also a process group id (a child of spawnChild). */
const running = new Map();
const GRACE_MS = 3_000;

/** node:child_process.spawn, registered and in a process group of its own. */
export function spawnChild(command, args, options = {}) {
  const child = spawn(command, args, { ...options, detached: true });
  if (child.pid === undefined) return child; // spawn failed: its "error" event says why
  running.set(child.pid, true);
  // The group outlives its leader when the leader leaves children behind: forget it only once
  // nothing is left in it.
  child.once("exit", () => {
    if (!alive(child.pid, true)) running.delete(child.pid);
  });
  return child;
}

/** Registers a process started elsewhere; returns a function that forgets it once it is closed. */
export function trackPid(pid) {
  if (pid) running.set(pid, false);
  return () => running.delete(pid);
}

/**
 * Stops the given registered pids (default: all): SIGTERM to each process or group, then
 * SIGKILL to what is still alive after a grace period.
 */
export async function stopChildren(pids = [...running.keys()]) {
  signal(pids, "SIGTERM");
  const deadline = Date.now() + GRACE_MS;
  while (pids.some((pid) => alive(pid, running.get(pid))) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  signal(pids, "SIGKILL");
  for (const pid of pids) running.delete(pid);
}

/** Stops one child of spawnChild() and waits for it to be gone. */
export const stopChild = (child) => stopChildren([child.pid]);

function signal(pids, name) {
  for (const pid of pids) {
    if (!running.has(pid)) continue;
    try {
      process.kill(running.get(pid) ? -pid : pid, name);
    } catch {} // ESRCH: already gone
  }
}

/** Whether the process (or any process of its group) still exists. */
function alive(pid, group) {
  try {
    process.kill(group ? -pid : pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Clean-ups that are not processes (keys a run left in a shared Redis), run once at the end. */
const cleanups = new Set();
const CLEANUP_MS = 5_000;

/**
 * Registers a clean-up to run however the script ends (after its children are stopped); returns
 * a function that runs it now, once, and unregisters it (for the normal end).
 */
export function atStop(cleanup) {
  let done = null;
  const run = () => {
    cleanups.delete(run);
    done ??= Promise.resolve().then(cleanup);
    return done;
  };
  cleanups.add(run);
  return run;
}

async function runCleanups() {
  const pending = [...cleanups].map((run) => run().catch(() => {}));
  await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, CLEANUP_MS))]);
}

let stopping = false;
/** Stops every child, then exits: the one way out for errors, signals and time limits. */
export async function stopAndExit(code, why) {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`${why}; stopping ${running.size} child process(es)\n`);
  await stopChildren();
  await runCleanups();
  process.exit(code);
}

for (const [name, number] of [
  ["SIGINT", 2],
  ["SIGTERM", 15],
  ["SIGHUP", 1],
]) {
  process.on(name, () => {
    if (!stopping) return stopAndExit(128 + number, `\n${name}`);
    // A second Ctrl+C while waiting for the children: stop waiting.
    signal([...running.keys()], "SIGKILL");
    process.exit(128 + number);
  });
}
for (const event of ["uncaughtException", "unhandledRejection"]) {
  process.on(event, (error) => {
    // Once stopping, calls in flight fail because their servers are going: not news.
    if (stopping) return;
    process.stderr.write(`${error?.stack ?? error}\n`);
    stopAndExit(1, event);
  });
}
// process.exit() from anywhere leaves no time to wait: whatever is still registered is killed.
process.on("exit", () => signal([...running.keys()], "SIGKILL"));
