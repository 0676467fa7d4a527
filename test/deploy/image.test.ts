import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, mcpClient, podman, TEST_IMAGE } from "../helpers/podman.js";

const run = promisify(execFile);
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const pkg = JSON.parse(read("package.json"));
const serverJson = JSON.parse(read("server.json"));
const docs = read("docs/deployment.md");
/** The first shell block after `phrase` in docs/deployment.md. */
const block = (phrase: string) =>
  /```sh\n([\s\S]*?)```/.exec(docs.slice(docs.indexOf(phrase)))?.[1] ?? "";

// The image as docs/deployment.md starts it: no settings (so the embedded sandbox), read-only,
// without capabilities; then health, MCP over HTTP, and SIGTERM.
describe.skipIf(!TEST_IMAGE)("the container image", () => {
  const name = `portfolio-mcp-test-${process.pid}`;
  /** The documented commands for this test's container, image and port. */
  const documented = (text: string, port = 0) =>
    text
      .replaceAll(`portfolio-mcp:${pkg.version}`, TEST_IMAGE)
      .replaceAll(/(--name|logs|run|stop) portfolio-mcp\b(?!:)/g, `$1 ${name}`)
      .replace("port=8787", `port=${port}`);
  const sh = (script: string) => run("timeout", ["60", "bash", "-euo", "pipefail", "-c", script]);
  let port = 0;

  afterAll(async () => {
    await podman("rm", "--force", "--volumes", name).catch(() => "");
  });

  it("is under 250 MB, labelled, non-root, with a health check", async () => {
    const [image] = JSON.parse(await podman("image", "inspect", TEST_IMAGE));
    console.log(`${TEST_IMAGE}: ${(image.Size / 1e6).toFixed(1)} MB`);
    expect(image.Size).toBeLessThan(250e6);
    const labels = image.Config.Labels;
    expect(labels["org.opencontainers.image.version"]).toBe(pkg.version);
    expect(labels["org.opencontainers.image.title"]).toBe("portfolio-mcp");
    expect(labels["io.modelcontextprotocol.server.name"]).toBe(serverJson.name);
    expect(image.Config.User).toBe("10001:10001");
    expect(image.Healthcheck.Test.join(" ")).toContain("/healthz");
    expect(Object.keys(image.Config.ExposedPorts)).toEqual(["8787/tcp"]);
  });

  it("starts on the sandbox as documented, prints its token, and gets healthy", async () => {
    const start = block("Start it on the sandbox:");
    expect(start).toContain("--read-only --cap-drop=ALL --security-opt no-new-privileges");
    let printed = "";
    for (let attempt = 0; !printed; attempt++) {
      port = await freePort();
      try {
        printed = (await sh(documented(start, port))).stdout;
      } catch (error) {
        await podman("rm", "--force", "--volumes", name).catch(() => "");
        if (attempt === 2) throw error; // the port was taken meanwhile: try another
      }
    }
    expect(printed).toMatch(/^[0-9a-f]{64}\n$/); // the container's id
    const token = await sh(documented(block("its log has the token")));
    expect(token.stdout).toMatch(/Token\s+\S+\s+\(generated/);
  }, 90_000);

  it("serves MCP over HTTP with that token: a read, and a write drafted and confirmed once", async () => {
    const logs = (await sh(`podman logs ${name} 2>&1`)).stdout; // the banner is on stderr
    expect(logs).toContain("embedded sandbox, demo data");
    const token = /Token\s+(\S+)\s+\(generated/.exec(logs)![1]!;
    const { client, call } = await mcpClient(`http://127.0.0.1:${port}/mcp`, token);
    try {
      const [operation] = (await call("list_operations", { status: "travaux", limit: 1 })).items;
      const notes = async () =>
        (await call("list_operation_notes", { operation_id: operation.id, limit: 200 })).total;
      const before = await notes();
      const draft = await call("create_operation_note", {
        operation_id: operation.id,
        content: "Image test: the container confirms once.",
      });
      expect(draft.status).toBe("awaiting_confirmation");
      const done = await call("confirm_write", { confirmation_id: draft.confirmation_id });
      expect(done.status).toBe("succeeded");
      const again = await call("confirm_write", { confirmation_id: draft.confirmation_id });
      expect(again.result.id).toBe(done.result.id);
      expect(await notes()).toBe(before + 1);
    } finally {
      await client.close();
    }
  });

  it("stops on SIGTERM as PID 1 with exit 0 within the grace, the journal on its volume", async () => {
    const stop = documented(block("To stop it:")).trim();
    expect(stop).toBe(`podman stop ${name}`);
    const started = Date.now();
    await sh(stop);
    const seconds = (Date.now() - started) / 1000;
    console.log(`${stop}: ${seconds.toFixed(1)} s`);
    expect(seconds).toBeLessThan(8);
    expect(await podman("inspect", "--format", "{{.State.ExitCode}}", name)).toBe("0");
    const volume = await podman(
      "inspect",
      "--format",
      '{{range .Mounts}}{{if eq .Destination "/var/lib/portfolio-mcp"}}{{.Source}}{{end}}{{end}}',
      name,
    );
    const intents = join(volume, "intents");
    const states = readdirSync(intents)
      .filter((f) => f.endsWith(".json"))
      .map((f) => JSON.parse(readFileSync(join(intents, f), "utf8")).state);
    expect(states).toEqual(["succeeded"]);
  });
});
