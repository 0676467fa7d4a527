#!/usr/bin/env node
// npm run conformance: the MCP conformance suite's generic server scenarios against our
// server over Streamable HTTP (on the embedded sandbox).
//
// The runner sends no Authorization header, and the server has no unauthenticated mode. A
// local proxy adds the bearer on the way in, as a reverse proxy in front of a deployment
// would, and passes Host and Origin through unchanged so that the DNS-rebinding scenario
// tests the server's own guard (the proxy's address is what the server is told to accept).
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, request } from "node:http";
import { spawnChild, stopChildren } from "../bench/lib/children.mjs";
import { spawnUntil } from "../bench/lib/processes.mjs";

const SUITE = "@modelcontextprotocol/conformance@0.1.16";
const SCENARIOS = process.env.CONFORMANCE_SCENARIOS?.split(",") ?? [
  "server-initialize",
  "ping",
  "tools-list",
  "resources-list",
  "prompts-list",
  "logging-set-level",
  "dns-rebinding-protection",
];
const root = new URL("..", import.meta.url).pathname;
const token = randomBytes(24).toString("base64url");

execFileSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });

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

const server = await spawnUntil(
  process.execPath,
  [`${root}dist/cli.js`, "serve", "--http", "--sandbox", "--port", "0"],
  {
    PORTFOLIO_MCP_TOKEN: token,
    PORTFOLIO_MCP_ALLOWED_HOSTS: `127.0.0.1:${proxyPort},localhost:${proxyPort}`,
    PORTFOLIO_MCP_ALLOWED_ORIGINS: `http://127.0.0.1:${proxyPort},http://localhost:${proxyPort}`,
    PORTFOLIO_LOG_LEVEL: "warn",
  },
  /URL\s+http:\/\/127\.0\.0\.1:(\d+)\/mcp/,
);
upstream = Number(server.match[1]);

const url = `http://127.0.0.1:${proxyPort}/mcp`;
const results = [];
for (const scenario of SCENARIOS) {
  const { status, output } = await run("npx", [
    "-y",
    "-p",
    "node@22",
    "-p",
    SUITE,
    "conformance",
    "server",
    "--url",
    url,
    "--scenario",
    scenario,
  ]);
  results.push({ scenario, passed: status === 0 });
  console.log(`${status === 0 ? "PASS" : "FAIL"} ${scenario}`);
  if (status !== 0)
    console.log(
      output
        .split("\n")
        .filter((l) => !/npm warn/.test(l))
        .slice(-25)
        .join("\n"),
    );
}
await stopChildren();
proxy.close();
const failed = results.filter((r) => !r.passed).length;
console.log(`\n${results.length - failed} of ${results.length} scenarios passed`);
process.exitCode = failed === 0 ? 0 : 1;

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
