#!/usr/bin/env node
import { enableCompileCache } from "node:module";
import { join } from "node:path";
import { parseFlags, UsageError } from "./cli-args.js";
import type { VariableName } from "./config.js";
import { stateDirOf } from "./state-dir.js";
import { VERSION } from "./version.js";

// Every client launch compiles the same code: V8's compiled form of each module, kept under the
// state directory, roughly halves what a start costs after the first. A directory that cannot
// be written only means no cache (Node reports it and carries on); it never stops the start.
try {
  enableCompileCache(join(stateDirOf(process.argv.slice(2), process.env), "compile-cache"));
} catch {}

const FLAG_VARIABLES: Record<string, VariableName> = {
  "base-url": "PORTFOLIO_API_BASE_URL",
  "key-id": "PORTFOLIO_API_KEY_ID",
  "delegated-user-email": "PORTFOLIO_DELEGATED_USER_EMAIL",
  "delegated-user-id": "PORTFOLIO_DELEGATED_USER_ID",
  "routes-file": "PORTFOLIO_ROUTES_FILE",
  "contract-file": "PORTFOLIO_CONTRACT_FILE",
  "state-dir": "PORTFOLIO_STATE_DIR",
  "export-dir": "PORTFOLIO_EXPORT_DIR",
  "log-level": "PORTFOLIO_LOG_LEVEL",
};

async function usage(): Promise<string> {
  const { describeVariables } = await import("./config.js");
  const variables = describeVariables()
    .map(({ name, description }) => `  ${name.padEnd(36)} ${description}`)
    .join("\n");
  return `portfolio-mcp ${VERSION}: an MCP server for a Partner API portfolio

Usage:
  portfolio-mcp [options]                 serve MCP over stdio (how desktop clients launch it)
  portfolio-mcp serve --http [options]    serve MCP over Streamable HTTP at /mcp
  portfolio-mcp doctor [options]          check the configuration, sign-in, delegated user and what the key may do
  portfolio-mcp sandbox [--port 4010]     serve the Partner API sandbox alone (sandbox --help)
  portfolio-mcp hash-token                print the SHA-256 of a token read on stdin (for the clients file)
  portfolio-mcp audit verify FILE...      check an audit trail's chain (exit 0 when it holds)
  portfolio-mcp audit query [...] FILE... who did what, when (audit --help for the filters)

Options:
  --sandbox                   use the embedded sandbox: demo data and credentials, nothing to configure
  --http                      with serve: Streamable HTTP instead of stdio
  --stateless                 with --http: no sessions, JSON answers (load-balanced deployments)
  --port N                    HTTP port (default 8787)
  --host ADDRESS              HTTP bind address (default 127.0.0.1, loopback)
  --base-url URL              sets PORTFOLIO_API_BASE_URL
  --key-id ID                 sets PORTFOLIO_API_KEY_ID (the secret comes from PORTFOLIO_API_SECRET only)
  --delegated-user-email E    sets PORTFOLIO_DELEGATED_USER_EMAIL
  --delegated-user-id ID      sets PORTFOLIO_DELEGATED_USER_ID
  --routes-file PATH          sets PORTFOLIO_ROUTES_FILE
  --contract-file PATH        sets PORTFOLIO_CONTRACT_FILE
  --state-dir PATH            sets PORTFOLIO_STATE_DIR
  --export-dir PATH           sets PORTFOLIO_EXPORT_DIR
  --log-level LEVEL           sets PORTFOLIO_LOG_LEVEL
  -v, --version               print the version
  -h, --help                  print this help

Environment variables (flags win over them):
${variables}

Traces and metrics: the standard OpenTelemetry variables (OTEL_EXPORTER_OTLP_ENDPOINT,
OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, …); off without an endpoint.`;
}

async function main(argv: string[]): Promise<void> {
  // Each command loads only its own modules: the stdio server starts on the critical path of
  // every client launch, and should not pay for the simulator or the HTTP stack.
  if (argv[0] === "sandbox")
    return (await import("./sandbox-command.js")).runSandboxCommand(argv.slice(1));
  if (argv[0] === "hash-token") return hashToken();
  if (argv[0] === "audit") {
    process.exitCode = await (await import("./audit/cli.js")).runAuditCommand(argv.slice(1));
    return;
  }
  const command = await readCommand(argv);
  if (command === null) return;
  // Over stdio, the transport starts first and answers discovery while the rest loads behind
  // it (src/app-stdio.ts); PORTFOLIO_SANDBOX is read there, with the rest of the configuration.
  if (command.name === "stdio") return serveOverStdio(command);
  // serve --http and doctor both need the server's modules: they load beside the configuration.
  import("./app.js").catch(() => {});
  const { sandboxRequested } = await import("./config.js");
  const sandbox = command.sandbox || sandboxRequested(process.env);
  if (command.name === "doctor") return runDoctorCommand(sandbox, command.sources);
  return serveOverHttp({ ...command, sandbox });
}

/** What serve, doctor and the stdio server were asked for, from the command line. */
interface Command {
  name: "stdio" | "http" | "doctor";
  sandbox: boolean;
  stateless: boolean;
  port: number;
  host: string;
  sources: { env: NodeJS.ProcessEnv; flags: Partial<Record<VariableName, string>> };
}

/**
 * The command line of serve, doctor and the stdio server, checked. Null when it was answered
 * here (--version, --help) or refused with the usage (an unknown command: exit code 2).
 */
async function readCommand(argv: string[]): Promise<Command | null> {
  const { values, positionals } = parseFlags({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      sandbox: { type: "boolean" },
      http: { type: "boolean" },
      stateless: { type: "boolean" },
      port: { type: "string", default: "8787" },
      host: { type: "string", default: "127.0.0.1" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "v" },
      ...Object.fromEntries(
        Object.keys(FLAG_VARIABLES).map((flag) => [flag, { type: "string" as const }]),
      ),
    },
  });
  if (values.version || values.help) {
    process.stdout.write(values.version ? `${VERSION}\n` : `${await usage()}\n`);
    return null;
  }
  const [name, ...extra] = positionals;
  if ((name !== undefined && name !== "serve" && name !== "doctor") || extra.length > 0) {
    process.stderr.write(`Unknown command: ${positionals.join(" ")}\n\n${await usage()}\n`);
    process.exitCode = 2;
    return null;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`--port must be an integer from 0 to 65535, got ${values.port}`);
  }
  const flags: Partial<Record<VariableName, string>> = {};
  for (const [flag, variable] of Object.entries(FLAG_VARIABLES)) {
    const value = (values as Record<string, unknown>)[flag];
    if (typeof value === "string") flags[variable] = value;
  }
  return {
    name: name === "doctor" ? "doctor" : values.http ? "http" : "stdio",
    sandbox: values.sandbox === true,
    stateless: values.stateless === true,
    port,
    host: values.host ?? "127.0.0.1",
    sources: { env: process.env, flags },
  };
}

async function serveOverStdio({ sandbox, port, host, sources }: Command): Promise<void> {
  // SIGINT and SIGTERM: handled there, once the rest of the server has loaded.
  (await import("./app-stdio.js")).startStdio({
    transport: "stdio",
    sandbox,
    port,
    host,
    sources,
  });
}

async function runDoctorCommand(sandbox: boolean, sources: Command["sources"]): Promise<void> {
  const { prepare } = await import("./app.js");
  const { exitCode, formatTable, runDoctor } = await import("./doctor.js");
  const { deploymentOffer, formatOffer } = await import("./doctor-offer.js");
  const prepared = await prepare(
    { sandbox, sources },
    process.env.PORTFOLIO_LOG_LEVEL ?? "error",
    false,
  );
  try {
    const rows = await runDoctor(prepared.config, prepared.api);
    const offer = deploymentOffer(prepared.config, prepared.api.routes);
    process.stdout.write(
      `portfolio-mcp doctor${sandbox ? " (embedded sandbox)" : ""}\n\n${formatTable(rows)}\n\n${formatOffer(offer, prepared.contract, prepared.config)}\n`,
    );
    process.exitCode = exitCode(rows);
  } finally {
    await prepared.close();
  }
}

async function serveOverHttp({ sandbox, port, host, stateless, sources }: Command): Promise<void> {
  const { startApp } = await import("./app.js");
  const stop = await startApp({ transport: "http", sandbox, port, host, stateless, sources });
  const shutdown = () => void stop().then(() => process.exit(0));
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

/** Reads a token on stdin and prints its SHA-256: what the clients file stores. */
async function hashToken(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const token = Buffer.concat(chunks).toString("utf8").trim();
  if (token.length < 16) throw new Error("give a token of at least 16 characters on stdin");
  const { sha256Hex } = await import("./transport/clients.js");
  process.stdout.write(`${sha256Hex(token)}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // Configuration errors are one line naming the variable; anything else shows its message.
  process.stderr.write(
    `portfolio-mcp: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(error instanceof UsageError ? 2 : 1);
});
