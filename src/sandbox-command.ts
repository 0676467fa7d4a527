import {
  DEMO_KEYS,
  DEMO_USERS,
  demoContract,
  type RequestLogEntry,
  type Sandbox,
  startSandbox,
} from "@portfolio-mcp/sandbox";
import { parseFlags, UsageError } from "./cli-args.js";
import { createLogger } from "./log.js";

const USAGE = `Usage: portfolio-mcp sandbox [--port 4010] [--host 127.0.0.1] [--seed aurore-demo] [--today YYYY-MM-DD]
       portfolio-mcp sandbox contract --key <key_id> [--seed aurore-demo] [--server-url URL]

Serves the Partner API simulator with demo data and demo credentials (no real data, no secrets).
\`contract\` prints the OpenAPI 3.1 export of one demo key (the operations it may call) as JSON.`;

/** `portfolio-mcp sandbox`: the simulator on its own, for humans and integrators. */
export async function runSandboxCommand(argv: string[]): Promise<void> {
  if (argv[0] === "contract") return runContractCommand(argv.slice(1));
  const { values } = parseFlags({
    args: argv,
    options: {
      port: { type: "string", default: "4010" },
      host: { type: "string", default: "127.0.0.1" },
      seed: { type: "string" },
      today: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`--port must be an integer between 0 and 65535, got ${values.port}`);
  }
  if (values.today !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(values.today)) {
    throw new Error(`--today must be a date (YYYY-MM-DD), got ${values.today}`);
  }
  const sandbox = await startSandbox({
    port,
    host: values.host,
    seed: values.seed,
    today: values.today,
    onRequest: requestLogger(),
  });
  // Handlers first: whoever reads the banner may signal us as soon as it appears.
  const stop = () => {
    void sandbox.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  process.stdout.write(banner(sandbox));
}

/** One log line per request on stderr: what was asked, by which key, how it ended. */
function requestLogger() {
  const log = createLogger();
  return (e: RequestLogEntry) =>
    log.info(
      {
        method: e.method,
        path: e.path,
        route: e.routeId,
        key: e.keyId,
        status: e.status,
        ms: e.durationMs,
      },
      "sandbox request",
    );
}

/** Where it listens and the demo credentials (public, sandbox only). */
function banner(sandbox: Sandbox): string {
  const { credentials: c } = sandbox;
  return [
    `Partner API sandbox listening at ${sandbox.baseUrl}`,
    "",
    "Demo credentials (public, sandbox only):",
    `  key id          ${c.keyId}`,
    `  secret          ${c.secret}`,
    `  token prefix    ${c.tokenPrefix}`,
    `  delegated user  ${c.delegatedUserEmail} (header ${c.delegationHeaderPrefix}-Email)`,
    "",
    "Other demo keys:",
    `  read-only       ${DEMO_KEYS.readOnly.keyId} / ${DEMO_KEYS.readOnly.secret}`,
    `  two routes only ${DEMO_KEYS.limited.keyId} / ${DEMO_KEYS.limited.secret}`,
    `  portfolio mgr   ${DEMO_KEYS.portfolioManager.keyId} / ${DEMO_KEYS.portfolioManager.secret}`,
    `Demo users: ${Object.values(DEMO_USERS).join(", ")}`,
    "",
    "Press Ctrl+C to stop.",
    "",
  ].join("\n");
}

/** `portfolio-mcp sandbox contract --key <key_id>`: a demo key's export, JSON on stdout. */
function runContractCommand(argv: string[]): void {
  const { values } = parseFlags({
    args: argv,
    options: {
      key: { type: "string" },
      seed: { type: "string" },
      "server-url": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const keys = Object.values(DEMO_KEYS).map((k) => k.keyId);
  if (!values.key) throw new UsageError(`--key is required: one of ${keys.join(", ")}`);
  const contract = demoContract(values.key, {
    seed: values.seed,
    serverUrl: values["server-url"],
  });
  if (!contract) throw new Error(`--key: no demo key ${values.key}; one of ${keys.join(", ")}`);
  process.stdout.write(`${JSON.stringify(contract, null, 2)}\n`);
}
