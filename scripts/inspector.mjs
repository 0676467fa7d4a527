#!/usr/bin/env node
// npm run inspector: the MCP Inspector's CLI (2.12, under Node 22) lists our tools in both
// protocol eras with --strict, against `serve --http --sandbox`; it must find no schema that
// clients cannot read portably (0 warnings, 0 errors). Then, as a client that advertises MCP
// Apps, its app report (--advertise-apps --app-info) must show the confirmation card on every
// write tool and the two views on get_portfolio_overview and get_operation.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { spawnChild, stopChildren } from "./lib/children.mjs";
import { spawnUntil } from "./lib/spawn.mjs";

const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";
const ERAS = ["modern", "legacy"];
const root = new URL("..", import.meta.url).pathname;
const token = randomBytes(24).toString("base64url");

execFileSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
const server = await spawnUntil(
  process.execPath,
  [`${root}dist/cli.js`, "serve", "--http", "--sandbox", "--port", "0"],
  { PORTFOLIO_MCP_TOKEN: token, PORTFOLIO_LOG_LEVEL: "warn" },
  /URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/,
);
const url = server.match[1];

const inspector = (era, ...args) =>
  run("npx", [
    "-y",
    "-p",
    INSPECTOR,
    "mcp-inspector",
    "--cli",
    url,
    "--transport",
    "http",
    "--header",
    `Authorization: Bearer ${token}`,
    "--method",
    "tools/list",
    "--protocol-era",
    era,
    ...args,
  ]);
const CARD = "ui://portfolio/confirm-write.html";
const VIEWS = {
  get_portfolio_overview: "ui://portfolio/overview.html",
  get_operation: "ui://portfolio/operation.html",
};

let failed = false;
for (const era of ERAS) {
  const { status, stdout, stderr } = await inspector(era, "--strict", "--format", "json");
  let tools = 0;
  let findings = null;
  let writes = [];
  try {
    const answer = JSON.parse(stdout);
    tools = answer.result?.tools?.length ?? 0;
    findings = answer.schemaFindings ?? null;
    // The write tools a model drafts with (the two-step pair settles drafts, it drafts none).
    writes = (answer.result?.tools ?? [])
      .filter((t) => t.annotations?.readOnlyHint === false)
      .map((t) => t.name)
      .filter((name) => name !== "confirm_write" && name !== "cancel_write");
  } catch {
    findings = "no JSON answer";
  }
  // --strict exits 0 on warnings: they are counted from its report instead.
  const warnings = stderr.split("\n").filter((l) => /^(Warning|Error):/.test(l)).length;
  const ok = status === 0 && tools > 0 && findings === null && warnings === 0;
  failed ||= !ok;
  console.log(
    `${ok ? "PASS" : "FAIL"} tools/list --strict --protocol-era ${era}: ${tools} tools, ${warnings} warnings${findings ? `, findings: ${JSON.stringify(findings).slice(0, 500)}` : ""}`,
  );
  if (!ok)
    console.log(
      stderr
        .split("\n")
        .filter((l) => !/npm warn/.test(l))
        .slice(-30)
        .join("\n"),
    );

  const apps = await inspector(era, "--advertise-apps", "--app-info");
  const report = new Map(
    apps.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line))
      .map((entry) => [entry.toolName, entry]),
  );
  const expected = [
    ...writes.map((name) => [name, CARD]),
    ["app_confirm_write", CARD],
    ["app_cancel_write", CARD],
    ...Object.entries(VIEWS),
  ];
  const wrong = expected.filter(([name, uri]) => report.get(name)?.resourceUri !== uri);
  const unsafe = [...report.values()].filter(
    (e) =>
      e.hasApp &&
      JSON.stringify(e.csp) !== '{"connectDomains":[],"resourceDomains":[],"frameDomains":[]}',
  );
  const appsOk =
    apps.status === 0 && writes.length > 0 && wrong.length === 0 && unsafe.length === 0;
  failed ||= !appsOk;
  const withApp = [...report.values()].filter((e) => e.hasApp).length;
  console.log(
    `${appsOk ? "PASS" : "FAIL"} tools/list --advertise-apps --app-info --protocol-era ${era}: ${withApp} of ${report.size} tools with an app (${writes.length} write tools with the card, 2 card buttons, 2 views)${wrong.length ? `; wrong: ${wrong.map(([n]) => n).join(", ")}` : ""}${unsafe.length ? `; CSP not empty: ${unsafe.map((e) => e.toolName).join(", ")}` : ""}`,
  );
}
await stopChildren();
process.exitCode = failed ? 1 : 0;

function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawnChild(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c) => {
      stdout += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c) => {
      stderr += c;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ status: code ?? 1, stdout, stderr }));
  });
}
