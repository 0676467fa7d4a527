import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const run = promisify(execFile);

/**
 * The image the container tests exercise: `npm run image` builds it, CI names it in
 * PORTFOLIO_TEST_IMAGE. Without it those tests are skipped, with a line saying so (they need
 * podman and a built image; .ci/run has both).
 */
export const TEST_IMAGE = process.env.PORTFOLIO_TEST_IMAGE ?? "";
if (!TEST_IMAGE)
  console.warn("PORTFOLIO_TEST_IMAGE is not set: the container and fleet tests are skipped");

/** Runs podman (CONTAINERS_CONF from the environment) and gives its stdout, trimmed. */
export async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run("podman", args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/** A port nothing listens on right now (the caller retries if it is taken meanwhile). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls until `check` returns a value (not undefined), or fails after `ms` with `what`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
}

/** A 2025-era SDK client on an HTTP endpoint with a bearer token; `call` gives the structured output. */
export async function mcpClient(url: string, token: string) {
  const client = new Client({ name: "deploy-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  // The tools' structured output, read by the test field by field.
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<any> => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    return result.structuredContent;
  };
  return { client, call };
}
