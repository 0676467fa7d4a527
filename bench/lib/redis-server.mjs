// A private redis-server for one script's run, on a free loopback port, without persistence:
// measurements count its commands without anyone else's, and nothing outlives the run.
import { spawnChild, stopChild } from "../../scripts/lib/children.mjs";
import { freePort } from "./processes.mjs";

/** Starts redis-server (on PATH); resolves once it accepts connections. */
export async function privateRedis() {
  const port = await freePort();
  const child = spawnChild(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  await new Promise((resolve, reject) => {
    let seen = "";
    child.on("error", (error) =>
      reject(new Error(`cannot start redis-server (is it installed?): ${error.message}`)),
    );
    child.on("exit", (code) => reject(new Error(`redis-server exited (${code}): ${seen}`)));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      seen += chunk;
      if (seen.includes("Ready to accept connections")) resolve();
    });
  });
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    stop: () => stopChild(child),
  };
}
