import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { afterAll, describe, expect, it } from "vitest";
import { untilBanner } from "../helpers/banner.js";
import { rawRequest } from "../helpers/raw.js";

// Bound to every address, as in a container: the server answers on loopback too (a health
// check inside the container, a port published on 127.0.0.1), and the banner says where
// clients reach it: 127.0.0.1, or PORTFOLIO_PUBLIC_URL when set.
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const children: ChildProcess[] = [];

async function start(env: Record<string, string> = {}): Promise<string> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  );
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--http", "--sandbox", "--host", "0.0.0.0", "--port", "0"],
    { env: { ...clean, PORTFOLIO_LOG_LEVEL: "warn", ...env } },
  );
  children.push(child);
  return untilBanner(child);
}
afterAll(async () => {
  for (const child of children) {
    child.kill("SIGTERM");
    await once(child, "exit");
  }
});

describe("serve --http --host 0.0.0.0", () => {
  it("answers its loopback names, refuses any other Host, and prints a loopback URL", async () => {
    const banner = await start();
    const url = /URL\s+(http:\/\/127\.0\.0\.1:(\d+)\/mcp)/.exec(banner);
    expect(url, banner).not.toBeNull();
    const port = url![2];
    const get = (host: string) => rawRequest(url![1]!, "GET", "/healthz", { host });
    expect((await get(`127.0.0.1:${port}`)).status).toBe(200);
    expect((await get(`localhost:${port}`)).status).toBe(200);
    const foreign = await get(`attacker.example:${port}`);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toContain(`Host attacker.example:${port} is not allowed.`);
    expect((await get(`0.0.0.0:${port}`)).status).toBe(200);
  });

  it("prints PORTFOLIO_PUBLIC_URL as the address clients use", async () => {
    const banner = await start({ PORTFOLIO_PUBLIC_URL: "https://mcp.example.com" });
    expect(banner).toContain("URL    https://mcp.example.com/mcp");
    expect(banner).toContain(
      "claude mcp add --transport http portfolio https://mcp.example.com/mcp",
    );
  });
});
