import { spawnChild, stopChild } from "./children.mjs";

/** How long a child may take to say it is ready before the script gives up on it. */
const READY_TIMEOUT_MS = 60_000;

/**
 * The environment without the caller's PORTFOLIO_* variables: each script configures the
 * servers it starts explicitly (including the limits it needs), so figures do not depend on
 * the shell they were run from.
 */
export const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")));

/** Spawns a process and resolves once its stderr matches, with the match and stderr so far. */
export function spawnUntil(command, args, env, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawnChild(command, args, {
      env: { ...cleanEnv(), ...env },
      stdio: ["pipe", "ignore", "pipe"],
    });
    let seen = "";
    const timer = setTimeout(() => {
      stopChild(child);
      reject(new Error(`${command} ${args.join(" ")}: not ready after ${READY_TIMEOUT_MS} ms`));
    }, READY_TIMEOUT_MS);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      seen += chunk;
      const match = pattern.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, stderr: seen });
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code ?? signal}): ${seen.slice(-500)}`));
    });
  });
}
