import { spawn } from "node:child_process";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleSources, DIST, moduleLog, sandboxServerEnv } from "./helpers/module-log.js";
import { initializeBody, MCP_HEADERS } from "./helpers/raw.js";

/**
 * What a `serve --http` start loads (dist/cli.js is the esbuild bundle; dist/bundle-meta.json
 * says which sources each chunk holds): without sign-in configured, the token checks of
 * src/transport/oauth.ts and jose never load, not even for the answers that tell a client how
 * to sign in (src/transport/oauth-metadata.ts).
 */
const TOKEN = "cold-path-http-token-0123456789";

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

describe("the serve --http cold path", () => {
  it("never loads the OAuth token checks without sign-in", async () => {
    const { dir, hook, lines } = moduleLog("cold-path-http-");
    const child = spawn(
      process.execPath,
      ["--import", hook, join(DIST, "cli.js"), "serve", "--http", "--port", "0"],
      {
        env: { ...sandboxServerEnv(sandbox, dir), PORTFOLIO_MCP_TOKEN: TOKEN },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = "";
        child.stderr.on("data", (chunk: Buffer) => {
          text += chunk.toString();
          const found = /URL\s+(http:\/\/\S+)/.exec(text)?.[1];
          if (found) resolve(found);
        });
        child.once("exit", () => reject(new Error(`exited before listening: ${text}`)));
      });
      const res = await fetch(url, {
        method: "POST",
        headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: initializeBody,
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('"protocolVersion"');
      // A path that tells how to sign in is answered (404 without sign-in) by the same steps.
      const metadata = await fetch(new URL("/.well-known/oauth-protected-resource", url));
      expect(metadata.status).toBe(404);
      const sources = bundleSources(lines());
      expect(sources).toContain("src/transport/oauth-metadata.ts");
      expect(
        sources.filter((s) => /node_modules\/jose\/|^src\/transport\/oauth\.ts$/.test(s)),
      ).toEqual([]);
    } finally {
      child.kill();
    }
  }, 30_000);
});
