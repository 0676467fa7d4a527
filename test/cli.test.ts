import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { PartnerTestClient } from "../packages/sandbox/test/helpers/partner-client.js";

const CLI = new URL("../dist/cli.js", import.meta.url).pathname;
let child: ChildProcess | undefined;

afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill("SIGTERM");
    await once(child, "exit");
  }
});

/** Starts `portfolio-mcp sandbox` and resolves with what it printed once it listens. */
async function startCli(args: string[]): Promise<string> {
  child = spawn(process.execPath, [CLI, "sandbox", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.setEncoding("utf8");
  for await (const chunk of child.stdout!) {
    out += chunk;
    if (out.includes("Press Ctrl+C")) return out;
  }
  throw new Error(`the sandbox exited early: ${out}`);
}

describe("portfolio-mcp sandbox", () => {
  it("serves, prints its base URL and demo credentials, and answers the documented flow", async () => {
    const banner = await startCli(["--port", "0", "--today", "2026-11-21"]);
    const baseUrl = /listening at (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(banner)?.[1];
    const keyId = /key id\s+(\S+)/.exec(banner)?.[1];
    const secret = /secret\s+(\S+)/.exec(banner)?.[1];
    expect(baseUrl).toBeDefined();
    expect(keyId).toBe("sandboxdemo");
    const client = new PartnerTestClient(baseUrl!, { keyId: keyId!, secret: secret! });
    const active = await client.get("/operations", { query: { status: "active" } });
    expect(active.status).toBe(200);
    expect(active.body.total).toBe(54);
  });

  it("stops cleanly on SIGTERM", async () => {
    await startCli(["--port", "0"]);
    child!.kill("SIGTERM");
    const [code] = await once(child!, "exit");
    expect(code).toBe(0);
  });

  it("refuses a bad port with a clear message", () => {
    const run = spawnSync(process.execPath, [CLI, "sandbox", "--port", "http"], {
      encoding: "utf8",
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("--port must be an integer");
  });

  it("prints help and version, and refuses unknown commands", () => {
    expect(spawnSync(process.execPath, [CLI, "--help"], { encoding: "utf8" }).stdout).toContain(
      "sandbox",
    );
    expect(spawnSync(process.execPath, [CLI, "--version"], { encoding: "utf8" }).stdout).toMatch(
      /^\d+\.\d+\.\d+\n$/,
    );
    const unknown = spawnSync(process.execPath, [CLI, "launch"], { encoding: "utf8" });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("Unknown command: launch");
    for (const [args, message] of [
      [
        ["--sanbox"],
        "portfolio-mcp: unknown option --sanbox; did you mean --sandbox? (see --help)",
      ],
      [
        ["serve", "--htpp"],
        "portfolio-mcp: unknown option --htpp; did you mean --http? (see --help)",
      ],
      [
        ["sandbox", "--prot", "1"],
        "portfolio-mcp: unknown option --prot; did you mean --port? (see --help)",
      ],
      [["--frobnicate"], "portfolio-mcp: unknown option --frobnicate (see --help)"],
    ] as const) {
      const refused = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });
      expect(refused.status).toBe(2);
      expect(refused.stderr).toBe(`${message}\n`);
    }
  });
});
