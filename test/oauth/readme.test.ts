import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { INVENTORY } from "../../src/inventory/index.js";

const run = promisify(execFile);
/**
 * What the walk's client is listed, from the inventory: with the sandbox's contract, every tool
 * but the card's buttons for portfolio:write; its read-only tools for portfolio:read.
 */
const listed = INVENTORY.tools.filter((t) => t.settles !== "app");
const root = new URL("../..", import.meta.url).pathname;

/** A port free right now on loopback. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

describe("docs/shared-deployment.md: sign-in, tried locally", () => {
  it("runs as written: the challenge, the metadata, and two people signed in with their own surfaces", async () => {
    const readme = readFileSync(new URL("docs/shared-deployment.md", `file://${root}`), "utf8");
    const block = /```sh\n(node scripts\/dev-oauth\.mjs --port 4455 &[\s\S]*?)```/.exec(
      readme,
    )?.[1];
    expect(block).toBeDefined();
    const [as, mcp] = [await freePort(), await freePort()];
    const users = `/tmp/portfolio-users-${process.pid}-${Date.now()}.json`;
    const script = `trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${block!
      .replaceAll("4455", String(as))
      .replaceAll("8787", String(mcp))
      .replaceAll("/tmp/portfolio-users.json", users)}`;
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
    );
    const { stdout, stderr } = await run("bash", ["-euo", "pipefail", "-c", script], {
      cwd: root,
      env,
      timeout: 90_000,
    });
    expect(stdout).toContain("HTTP/1.1 401 Unauthorized");
    expect(stdout).toContain(
      `WWW-Authenticate: Bearer scope="portfolio:read portfolio:write", resource_metadata="http://127.0.0.1:${mcp}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(stdout).toContain(
      `{"resource":"http://127.0.0.1:${mcp}/mcp","authorization_servers":["http://127.0.0.1:${as}"],"scopes_supported":["portfolio:read","portfolio:write"],"bearer_methods_supported":["header"]`,
    );
    // The servers' own logs interleave on stderr: the sign-in lines, in order, among them.
    const lines = stderr.split("\n");
    const lineAfter = (line: string, from: number) => {
      const at = lines.indexOf(line, from);
      expect(at, line).toBeGreaterThan(-1);
      return at;
    };
    let at = lineAfter(
      `token for http://127.0.0.1:${mcp}/mcp, scope "portfolio:read portfolio:write"`,
      0,
    );
    at = lineAfter(`${listed.length} tools`, at);
    at = lineAfter("list_my_saved_views: 3 saved views", at);
    at = lineAfter(`token for http://127.0.0.1:${mcp}/mcp, scope "portfolio:read"`, at);
    at = lineAfter(`${listed.filter((t) => t.annotations.readOnlyHint).length} tools`, at);
    lineAfter("list_my_saved_views: 1 saved view", at);
  }, 120_000);
});
