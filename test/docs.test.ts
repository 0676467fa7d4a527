import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The README and docs/ as a reader walks them: every code block is run here on the sandbox, run
 * by the test named for it, or set aside with the reason it cannot run on the sandbox; every
 * relative link and #anchor resolves.
 */
const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const CLI = join(root, "dist/cli.js");
const PAGES = ["README.md", ...readdirSync(join(root, "docs")).map((f) => `docs/${f}`)].filter(
  (p) => p.endsWith(".md"),
);
const read = (page: string) => readFileSync(join(root, page), "utf8");

interface Block {
  page: string;
  lang: string;
  text: string;
}
const blocks: Block[] = PAGES.flatMap((page) =>
  [...read(page).matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)].map((m) => ({
    page,
    lang: m[1]!,
    text: m[2]!,
  })),
);

/** A block is named by its page and the start of its first line. */
type Verdict = { here: true } | { test: string } | { not: string };
const BLOCKS: Array<[page: string, starts: string, verdict: Verdict]> = [
  ["README.md", "npm install", { not: "the install and the whole suite: what CI runs" }],
  [
    "README.md",
    "npx -y -p @modelcontextprotocol/inspector",
    {
      not: "needs a running server's printed token; CI runs the Inspector (scripts/inspector.mjs)",
    },
  ],
  ["README.md", "{", { here: true }],
  ["README.md", "claude mcp add", { not: "needs Claude Code installed" }],
  ["docs/api.md", "npx portfolio-mcp sandbox contract --key sandboxpm", { here: true }],
  [
    "docs/architecture.md",
    "src/cli.ts",
    { not: "a map of folders, checked by test/layers.test.ts" },
  ],
  ["docs/audit.md", "npx portfolio-mcp audit", { test: "test/audit/docs.test.ts" }],
  ["docs/deployment.md", "port=8787", { test: "test/deploy/image.test.ts" }],
  ["docs/deployment.md", "until podman", { test: "test/deploy/image.test.ts" }],
  ["docs/deployment.md", "podman stop", { test: "test/deploy/image.test.ts" }],
  ["docs/deployment.md", "cd deploy", { test: "test/deploy/fleet.test.ts" }],
  [
    "docs/deployment.md",
    "kubectl",
    { not: "needs a cluster; test/deploy/kubernetes.test.ts checks the manifests" },
  ],
  ["docs/observability.md", "OTEL_EXPORTER_OTLP_ENDPOINT", { test: "test/telemetry/docs.test.ts" }],
  ["docs/observability.md", "telemetry ", { not: "output, shown by doctor" }],
  ["docs/observability.md", "receivers:", { not: "a collector's configuration, not ours" }],
  ["docs/observability.md", "scrape_configs:", { not: "Prometheus's configuration, not ours" }],
  ["docs/rate-limits.md", "list_operations was stopped", { not: "output: a refusal's sentence" }],
  ["docs/running.md", "{", { here: true }],
  ["docs/sandbox.md", "BASE=http://127.0.0.1:4010/v1", { here: true }],
  ["docs/sandbox.md", "npx portfolio-mcp sandbox contract --key sandboxdemo", { here: true }],
  ["docs/sandbox.md", 'import { startSandbox } from "@portfolio-mcp/sandbox";', { here: true }],
  ["docs/shared-deployment.md", "{", { here: true }],
  ["docs/shared-deployment.md", "token=$(openssl rand", { here: true }],
  ["docs/shared-deployment.md", "export PORTFOLIO_API_BASE_URL", { here: true }],
  ["docs/shared-deployment.md", "HTTP/1.1 ", { not: "output of the sign-in walk below" }],
  [
    "docs/shared-deployment.md",
    "node scripts/dev-oauth.mjs",
    { test: "test/oauth/readme.test.ts" },
  ],
  [
    "docs/troubleshooting.md",
    "family ",
    { not: "output of doctor --sandbox, run by test/install.test.ts" },
  ],
];
const verdictOf = (block: Block) =>
  BLOCKS.find(([page, starts]) => page === block.page && block.text.startsWith(starts))?.[2];
const blockAt = (page: string, starts: string) => {
  const found = blocks.filter((b) => b.page === page && b.text.startsWith(starts));
  expect(found, `${page}: a block starting ${starts}`).toHaveLength(1);
  return found[0]!.text;
};

/** The block as a shell script: npx portfolio-mcp is this checkout's build. */
const script = (text: string) =>
  text.replaceAll("npx portfolio-mcp", `${JSON.stringify(process.execPath)} ${CLI}`);
const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")));
const shell = (text: string, cwd = root) =>
  run("bash", ["-euo", "pipefail", "-c", text], { cwd, env: cleanEnv(), timeout: 60_000 });
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** Scratch directories of the walks, removed at the end. */
const scratch: string[] = [];
const scratchDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
};

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox.close();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe("every code block of the README and docs/", () => {
  it("is run here, run by a named test, or set aside with its reason", () => {
    const unclassified = blocks
      .filter((b) => !verdictOf(b))
      .map((b) => `${b.page}: ${b.text.split("\n")[0]}`);
    expect(unclassified, "classify each new block in BLOCKS").toEqual([]);
    for (const [page, starts, verdict] of BLOCKS) {
      expect(
        blocks.some((b) => b.page === page && b.text.startsWith(starts)),
        `${page} still has a block starting ${starts}`,
      ).toBe(true);
      if ("test" in verdict) {
        expect(existsSync(join(root, verdict.test)), verdict.test).toBe(true);
        if (verdict.test.startsWith("test/"))
          expect(read(verdict.test), `${verdict.test} reads ${page}`).toContain(page);
      }
    }
  });

  it("parses: every JSON block is JSON", () => {
    for (const b of blocks.filter((b) => b.lang === "json"))
      expect(() => JSON.parse(b.text), `${b.page}: ${b.text.slice(0, 60)}`).not.toThrow();
  });
});

describe("the sandbox's walks, as written", () => {
  it("docs/sandbox.md: openssl and curl sign in, read, and write a note", async () => {
    const block = blockAt("docs/sandbox.md", "BASE=http://127.0.0.1:4010/v1");
    const mark = sandbox.control.mark();
    const { stdout } = await shell(block.replace("http://127.0.0.1:4010/v1", sandbox.baseUrl));
    expect(stdout).toContain('"status":"');
    expect(stdout).toContain('"user_id":"apikey:sandboxdemo"');
    const routes = sandbox.control.requests({ since: mark }).map((e) => `${e.routeId} ${e.status}`);
    expect(routes).toEqual([
      "auth_token 200",
      "operations_list 200",
      "saved_views_list 200",
      "operations_list 200",
      "operation_note_create 201",
    ]);
    const active = sandbox.control.requests({ since: mark, routeId: "operations_list" })[0];
    expect(active?.query).toMatchObject({ status: "active" });
  });

  it("docs/sandbox.md: the contract export, from the command and from a running sandbox", async () => {
    const dir = scratchDir("docs-contract-");
    const block = blockAt(
      "docs/sandbox.md",
      "npx portfolio-mcp sandbox contract --key sandboxdemo",
    );
    const origin = new URL(sandbox.baseUrl).origin;
    const { stdout } = await shell(script(block).replace("http://127.0.0.1:4010", origin), dir);
    expect(JSON.parse(stdout)["x-key"].key_id).toBe("sandboxpm");
    const written = JSON.parse(readFileSync(join(dir, "contract.json"), "utf8"));
    expect(written["x-key"].key_id).toBe("sandboxdemo");
  });

  it("docs/api.md: the portfolio manager's export, and doctor on it", async () => {
    const dir = scratchDir("docs-api-");
    const block = blockAt("docs/api.md", "npx portfolio-mcp sandbox contract --key sandboxpm");
    const { stdout } = await shell(script(block), dir).catch((e) => e);
    const contract = JSON.parse(readFileSync(join(dir, "contract.json"), "utf8"));
    const operations = Object.values(contract.paths as Record<string, object>).flatMap((p) =>
      Object.keys(p),
    );
    expect(operations).toHaveLength(105);
    expect(stdout).toContain("Operations offered over stdio");
  }, 60_000);

  it("docs/sandbox.md: the programmatic use names the control's own methods", () => {
    const block = blockAt(
      "docs/sandbox.md",
      'import { startSandbox } from "@portfolio-mcp/sandbox";',
    );
    const named = [...block.matchAll(/control\.(\w+)\(/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(5);
    for (const name of named)
      expect(typeof (sandbox.control as unknown as Record<string, unknown>)[name], name).toBe(
        "function",
      );
    for (const option of block.matchAll(/^\s+(\w+): /gm))
      expect(read("packages/sandbox/src/index.ts"), option[1]).toContain(`${option[1]}?:`);
  });

  it("docs/shared-deployment.md: a token and the hash the clients file stores", async () => {
    const block = blockAt("docs/shared-deployment.md", "token=$(openssl rand");
    const { stdout } = await shell(`${script(block)}\necho "$token"`);
    const [hash, token] = stdout.trim().split("\n");
    const { createHash } = await import("node:crypto");
    expect(hash).toBe(createHash("sha256").update(token!).digest("hex"));
  });

  it("docs/shared-deployment.md: two replicas on one Redis, both ready", async () => {
    const block = blockAt("docs/shared-deployment.md", "export PORTFOLIO_API_BASE_URL");
    const [a, b] = [await freePort(), await freePort()];
    const dir = scratchDir("docs-fleet-");
    const prefix = `docs-fleet-${process.pid}-${Date.now()}:`;
    const text = script(block)
      .replace("http://127.0.0.1:4010/v1", sandbox.baseUrl)
      .replace("redis://127.0.0.1:6379/0", process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379/0")
      .replace("demo-fleet:", prefix)
      .replaceAll("8801", String(a))
      .replaceAll("8802", String(b))
      .replaceAll("/tmp/replica-", `${dir}/replica-`)
      // Wait for each replica's own readiness rather than a fixed five seconds.
      .replace(
        "sleep 5;",
        `for p in ${a} ${b}; do until curl -sf http://127.0.0.1:$p/readyz >/dev/null; do sleep 0.2; done; done;`,
      );
    const { stdout } = await shell(`trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${text}`);
    expect(stdout).toContain("shared state (Redis)");
    expect(stdout.match(/"status":"ready"/g)).toHaveLength(2);
  }, 60_000);
});

describe("links", () => {
  const anchors = (page: string) => {
    const slugs = new Set<string>();
    let inFence = false;
    for (const line of read(page).split("\n")) {
      if (line.startsWith("```")) inFence = !inFence;
      const heading = !inFence && /^#{1,6} (.*)$/.exec(line)?.[1];
      if (heading)
        slugs.add(
          heading
            .toLowerCase()
            .replace(/[^\p{L}\p{N} _-]/gu, "")
            .replace(/ /g, "-"),
        );
    }
    return slugs;
  };

  it("every relative link and anchor of the README, docs/ and CONTRIBUTING.md resolves", () => {
    const broken: string[] = [];
    for (const page of [...PAGES, "CONTRIBUTING.md"]) {
      const text = read(page).replace(/^```[\s\S]*?^```/gm, "");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:)/.test(target!)) continue;
        const [path, anchor] = target!.split("#");
        const file = path ? join(dirname(join(root, page)), path).slice(root.length) : page;
        // Screenshots are written by the browser tests under build/, not committed.
        if (file.startsWith("build/")) continue;
        if (!existsSync(join(root, file))) broken.push(`${page}: ${target}`);
        else if (anchor && !anchors(file).has(anchor)) broken.push(`${page}: ${target} (anchor)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("each docs page links back to the README and to another page", () => {
    for (const page of PAGES.filter((p) => p.startsWith("docs/"))) {
      const text = read(page);
      expect(text, page).toContain("](../README.md");
      expect(text.match(/\]\((?!\.\.\/|https?:|#)[\w-]+\.md/g)?.length ?? 0, page).toBeGreaterThan(
        0,
      );
    }
    for (const page of PAGES.filter((p) => p.startsWith("docs/")))
      expect(read("README.md"), `the README's map links ${page}`).toContain(`](${page})`);
  });
});
