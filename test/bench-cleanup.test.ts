// bench/lib/children.mjs: whatever way a bench, chaos or load script ends, the processes it
// started are gone afterwards, grandchildren included (npx runs the package in a child of its
// own). Each case runs a real script that starts a child, which starts a grandchild, and a
// second child registered by pid (as the SDK's stdio transport spawns it), then ends the script.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";

const HELPER = new URL("../scripts/lib/children.mjs", import.meta.url).href;
const IDLE = "setInterval(() => {}, 60000)";
/** A child that starts a grandchild, prints the grandchild's pid, and idles. */
const PARENT = `const { spawn } = require("node:child_process");
const grandchild = spawn(process.execPath, ["-e", ${JSON.stringify(IDLE)}], { stdio: "ignore" });
console.log(grandchild.pid);
${IDLE}`;

/** The script under test: once its processes are up and told to go, it ends as HOW says. */
const SCRIPT = `
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { writeFileSync } from "node:fs";
import { atStop, spawnChild, stopChildren, trackPid } from ${JSON.stringify(HELPER)};
const cleanUp = atStop(() => writeFileSync(process.env.MARKER, "cleaned"));
const child = spawnChild(process.execPath, ["-e", ${JSON.stringify(PARENT)}], {
  stdio: ["ignore", "pipe", "inherit"],
});
const [line] = await once(createInterface({ input: child.stdout }), "line");
const byPid = spawn(process.execPath, ["-e", ${JSON.stringify(IDLE)}], { stdio: "ignore" });
trackPid(byPid.pid);
console.log(JSON.stringify({ pids: [child.pid, Number(line), byPid.pid] }));
const go = createInterface({ input: process.stdin });
await once(go, "line");
go.close();
process.stdin.destroy();
const how = process.env.HOW;
if (how === "throw") throw new Error("failed on purpose");
if (how === "reject") Promise.reject(new Error("rejected on purpose"));
if (how === "exit") process.exit(3);
if (how === "end") {
  await stopChildren();
  await cleanUp();
}
else setInterval(() => {}, 60000);
`;

const started = new Set<number>();

/** Linux keeps a killed process whose parent is gone as a zombie until PID 1 reaps it. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
}

async function runScript(how: string, signal?: NodeJS.Signals) {
  const marker = join(mkdtempSync(join(tmpdir(), "cleanup-")), "cleaned");
  const script: ChildProcess = spawn(process.execPath, ["--input-type=module", "-e", SCRIPT], {
    env: { ...process.env, HOW: how, MARKER: marker },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  script.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => script.on("exit", resolve));
  const lines = createInterface({ input: script.stdout as NodeJS.ReadableStream });
  const pids = await new Promise<number[]>((resolve, reject) => {
    lines.on("line", (line) => resolve(JSON.parse(line).pids));
    exited.then(() =>
      reject(new Error(`the script ended before its processes were up: ${stderr}`)),
    );
  });
  for (const pid of pids) started.add(pid);
  expect(pids.every(alive)).toBe(true);
  if (signal) script.kill(signal);
  else script.stdin?.write("go\n");
  const code = await exited;
  // Stopping is over when the script has exited; give the kernel a moment to reap.
  const deadline = Date.now() + 2_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  // The clean-up that is not a process (keys in a shared Redis, say) ran too.
  return { code, survivors: pids.filter(alive), stderr, cleaned: existsSync(marker) };
}

afterAll(() => {
  for (const pid of started) if (alive(pid)) process.kill(pid, "SIGKILL");
});

describe.skipIf(process.platform !== "linux")("the bench scripts' children", () => {
  it("are stopped when the script ends normally", async () => {
    const { code, survivors, cleaned } = await runScript("end");
    expect({ code, survivors, cleaned }).toEqual({ code: 0, survivors: [], cleaned: true });
  });

  it("are stopped on Ctrl+C (SIGINT), and the script exits 130", async () => {
    const { code, survivors, stderr, cleaned } = await runScript("wait", "SIGINT");
    expect({ code, survivors, cleaned }).toEqual({ code: 130, survivors: [], cleaned: true });
    expect(stderr).toContain("SIGINT; stopping 2 child process(es)");
  });

  it("are stopped on SIGTERM", async () => {
    const { code, survivors, cleaned } = await runScript("wait", "SIGTERM");
    expect({ code, survivors, cleaned }).toEqual({ code: 143, survivors: [], cleaned: true });
  });

  it("are stopped when the script throws", async () => {
    const { code, survivors, stderr, cleaned } = await runScript("throw");
    expect({ code, survivors, cleaned }).toEqual({ code: 1, survivors: [], cleaned: true });
    expect(stderr).toContain("failed on purpose");
  });

  it("are stopped on an unhandled rejection", async () => {
    const { code, survivors, stderr, cleaned } = await runScript("reject");
    expect({ code, survivors, cleaned }).toEqual({ code: 1, survivors: [], cleaned: true });
    expect(stderr).toContain("rejected on purpose");
  });

  it("are killed when the script calls process.exit", async () => {
    const { code, survivors } = await runScript("exit");
    expect({ code, survivors }).toEqual({ code: 3, survivors: [] });
  });
});
