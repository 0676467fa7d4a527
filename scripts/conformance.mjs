#!/usr/bin/env node
// npm run conformance: the MCP conformance suite against our server over Streamable HTTP (on
// the embedded sandbox), for both protocol eras (--requirements 2025-11-25 and 2026-07-28),
// with sessions and with --stateless. Every scenario each requirement set lists runs; the only
// failures allowed are those in scripts/conformance-expected.yml, each with its reason.
//
// The runner sends no Authorization header, and the server has no unauthenticated mode. A
// local proxy adds the bearer on the way in, as a reverse proxy in front of a deployment
// would, and passes Host and Origin through unchanged so that the DNS-rebinding scenario
// tests the server's own guard (the proxy's address is what the server is told to accept).
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { join } from "node:path";
import { spawnChild, stopChild, stopChildren } from "./lib/children.mjs";
import { spawnUntil } from "./lib/spawn.mjs";

const SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.12";
const REQUIREMENTS = ["2025-11-25", "2026-07-28"];
const MODES = process.env.CONFORMANCE_MODES?.split(",") ?? ["sessions", "stateless"];
const root = new URL("..", import.meta.url).pathname;
const out = join(root, "build", "conformance");
const baseline = (file) => readFileSync(join(root, "scripts", file), "utf8");
const token = randomBytes(24).toString("base64url");

execFileSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

let upstream; // the server's port, known once it is up
const proxy = createServer((req, res) => {
  const forward = request(
    {
      host: "127.0.0.1",
      port: upstream,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, authorization: `Bearer ${token}` },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on("error", () => res.headersSent || res.writeHead(502).end());
  req.pipe(forward);
});
await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
const proxyPort = proxy.address().port;
const url = `http://127.0.0.1:${proxyPort}/mcp`;

const results = [];
for (const mode of MODES) {
  const server = await spawnUntil(
    process.execPath,
    [
      `${root}dist/cli.js`,
      "serve",
      "--http",
      "--sandbox",
      "--port",
      "0",
      ...(mode === "stateless" ? ["--stateless"] : []),
    ],
    {
      PORTFOLIO_MCP_TOKEN: token,
      PORTFOLIO_MCP_ALLOWED_HOSTS: `127.0.0.1:${proxyPort},localhost:${proxyPort}`,
      PORTFOLIO_MCP_ALLOWED_ORIGINS: `http://127.0.0.1:${proxyPort},http://localhost:${proxyPort}`,
      PORTFOLIO_LOG_LEVEL: "warn",
    },
    /URL\s+http:\/\/127\.0\.0\.1:(\d+)\/mcp/,
  );
  upstream = Number(server.match[1]);
  for (const requirements of REQUIREMENTS) {
    // The common baseline, plus what only a stateless 2025 run is expected to fail.
    const expected = join(out, `expected-${mode}-${requirements}.yml`);
    const extra =
      mode === "stateless" && requirements === "2025-11-25"
        ? baseline("conformance-expected-stateless-2025.yml").replace(/^server:\n/m, "")
        : "";
    writeFileSync(expected, `${baseline("conformance-expected.yml")}\n${extra}`);
    const { status, output } = await run("npx", [
      "-y",
      "-p",
      SUITE,
      "conformance",
      "server",
      "--url",
      url,
      "--requirements",
      requirements,
      "--expected-failures",
      expected,
      "-o",
      join(out, `${mode}-${requirements}`),
    ]);
    const summary = tally(output);
    results.push({ mode, requirements, status, ...summary });
    console.log(
      `${status === 0 ? "PASS" : "FAIL"} ${requirements} (${mode}): ${summary.passed} scenarios passed, ${summary.expected} expected failures (fixtures), ${summary.unexpected} unexpected`,
    );
    if (status !== 0)
      console.log(
        output
          .split("\n")
          .filter((l) => !/npm warn/.test(l))
          .slice(-40)
          .join("\n"),
      );
  }
  await stopChild(server.child);
}
await stopChildren();
proxy.close();
process.exitCode = results.every((r) => r.status === 0) ? 0 : 1;

/** Scored scenarios that passed, failed as expected, or failed unexpectedly. */
function tally(output) {
  const lines = output.split("\n");
  const scored = lines.filter((l) => /^[✓✗] \S+: \d+ passed, \d+ failed/.test(l));
  const expectedLine = lines.find((l) => /expected failure/i.test(l)) ?? "";
  const expectedCount = Number(/(\d+)/.exec(expectedLine)?.[1] ?? 0);
  return {
    passed: scored.filter((l) => l.startsWith("✓")).length,
    expected: expectedCount,
    unexpected: lines.filter((l) => /unexpected/i.test(l) && /✗|fail/i.test(l)).length,
  };
}

/**
 * Runs a command to its end, asynchronously (the proxy lives in this process and must keep
 * answering meanwhile). npx runs the suite in a child of its own: spawnChild puts both in one
 * process group, stopped with this script however it ends.
 */
function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawnChild(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding("utf8");
      stream.on("data", (chunk) => {
        output += chunk;
      });
    }
    child.on("error", reject);
    child.on("close", (code) => resolve({ status: code ?? 1, output }));
  });
}
