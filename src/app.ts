import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiClient } from "./api/client.js";
import { type Config, type ConfigSources, loadConfig } from "./config.js";
import { createLogger, SecretRedactor } from "./log.js";
import { Directory } from "./resources/directory.js";
import type { Sandbox } from "./sandbox/index.js";
import { createMcpServer } from "./server.js";
import { VERSION } from "./version.js";
import { WriteGate } from "./writes/gate.js";
import { FileJournal } from "./writes/journal.js";

export interface AppOptions {
  transport: "stdio" | "http";
  /** Start the embedded sandbox and use its demo credentials and demo user. */
  sandbox: boolean;
  port: number;
  host: string;
  sources: ConfigSources;
}

/**
 * Wires the server: configuration, logger, API client, then one transport. Returns a function
 * that stops everything in order.
 */
export interface Prepared {
  config: Config;
  api: ApiClient;
  logger: ReturnType<typeof createLogger>;
  sandbox: Sandbox | null;
  close(): Promise<void>;
}

/** Configuration (on the embedded sandbox if asked), logger and API client. */
export async function prepare(
  options: Pick<AppOptions, "sandbox" | "sources">,
  logLevel?: string,
): Promise<Prepared> {
  // Loaded only when asked for: a real deployment never pays for the simulator and its data.
  const sandbox = options.sandbox
    ? await (await import("./sandbox/index.js")).startSandbox({ port: 0, host: "127.0.0.1" })
    : null;
  let config: Config;
  try {
    config = loadConfig(sandbox ? withSandbox(options.sources, sandbox) : options.sources);
  } catch (error) {
    await sandbox?.close();
    throw error;
  }
  const redactor = new SecretRedactor();
  const logger = createLogger({ level: logLevel ?? config.logLevel, redactor });
  const api = new ApiClient({
    settings: config.api,
    logger,
    redactor,
    userAgent: `portfolio-mcp/${VERSION}`,
  });
  return {
    config,
    api,
    logger,
    sandbox,
    async close() {
      await api.close();
      await sandbox?.close();
    },
  };
}

/**
 * Wires the server: configuration, logger, API client, then one transport. Returns a function
 * that stops everything in order.
 */
export async function startApp(options: AppOptions): Promise<() => Promise<void>> {
  const { config, api, logger, sandbox, close: shutdownUpstream } = await prepare(options);
  const directory = new Directory(api);
  const writes = config.writes.readOnly
    ? undefined
    : { gate: await openGate(config, api, logger, !!sandbox), mode: config.writes.confirm };
  const sessionFor = (sessionId: string) =>
    createMcpServer({
      api,
      directory,
      logger,
      session: { sessionId, delegatedUser: config.api.delegatedUser },
      exportDir: config.server.exportDir,
      writes,
    });

  if (options.transport === "stdio") {
    const stop = async () => {
      await shutdownUpstream();
      process.exit(0);
    };
    const { serveStdio } = await import("./transport/stdio.js");
    await serveStdio(sessionFor(`stdio-${randomUUID()}`), logger, stop);
    return stop;
  }

  const { serveHttp } = await import("./transport/http.js");
  const token = config.server.mcpToken ?? randomBytes(24).toString("base64url");
  const http = await serveHttp({
    host: options.host,
    port: options.port,
    token,
    allowedHosts: config.server.allowedHosts,
    allowedOrigins: config.server.allowedOrigins,
    createSession: sessionFor,
    logger,
  });
  process.stderr.write(
    banner({
      url: http.url,
      token,
      generated: !config.server.mcpToken,
      upstream: config.api.baseUrl,
      sandbox: !!sandbox,
      user: config.api.delegatedUser,
    }),
  );
  return async () => {
    await http.close();
    await shutdownUpstream();
  };
}

/**
 * The write journal, and the delivery of writes a previous run left confirmed but unfinished.
 * The sandbox forgets its data on exit, so its journal is a fresh temporary directory unless a
 * state directory was named explicitly.
 */
async function openGate(
  config: Config,
  api: ApiClient,
  logger: ReturnType<typeof createLogger>,
  sandbox: boolean,
) {
  const dir =
    sandbox && !config.stateDirExplicit
      ? await mkdtemp(join(tmpdir(), "portfolio-mcp-sandbox-"))
      : config.stateDir;
  const gate = await WriteGate.open({
    store: new FileJournal(dir),
    api,
    logger,
    ttlMs: config.writes.confirmationTtlSeconds * 1000,
  });
  gate
    .recover()
    .catch((error: unknown) => logger.error({ err: error }, "could not finish confirmed writes"));
  return gate;
}

/** Points the configuration at the embedded sandbox, whatever the environment says about the API. */
function withSandbox(sources: ConfigSources, sandbox: Sandbox): ConfigSources {
  const c = sandbox.credentials;
  return {
    ...sources,
    env: {
      ...(sources.env ?? process.env),
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: c.keyId,
      PORTFOLIO_API_SECRET: c.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: c.delegatedUserEmail,
      PORTFOLIO_DELEGATED_USER_ID: "",
      PORTFOLIO_TOKEN_PREFIX: c.tokenPrefix,
      PORTFOLIO_DELEGATION_HEADER_PREFIX: c.delegationHeaderPrefix,
      PORTFOLIO_ROUTES_FILE: "",
    },
    flags: Object.fromEntries(
      Object.entries(sources.flags ?? {}).filter(
        ([name]) => !name.startsWith("PORTFOLIO_API_") && !name.startsWith("PORTFOLIO_DELEGATED"),
      ),
    ),
  };
}

function banner(b: {
  url: string;
  token: string;
  generated: boolean;
  upstream: string;
  sandbox: boolean;
  user: Config["api"]["delegatedUser"];
}): string {
  const auth = `Authorization: Bearer ${b.token}`;
  const who = b.user
    ? "email" in b.user
      ? b.user.email
      : b.user.id
    : "nobody (no delegated user)";
  const client = JSON.stringify({
    servers: {
      portfolio: { type: "http", url: b.url, headers: { Authorization: `Bearer ${b.token}` } },
    },
  });
  return `
portfolio-mcp ${VERSION}: MCP over Streamable HTTP

  URL    ${b.url}
  Token  ${b.token}${b.generated ? "   (generated; set PORTFOLIO_MCP_TOKEN to choose it)" : ""}
  API    ${b.sandbox ? `embedded sandbox, demo data (${b.upstream})` : b.upstream}, acting for ${who}

MCP Inspector (CLI):
  npx -y -p node@22 -p @modelcontextprotocol/inspector@latest mcp-inspector --cli ${b.url} --transport http --header "${auth}" --method tools/list
Claude Code:
  claude mcp add --transport http portfolio ${b.url} --header "${auth}"
VS Code (.vscode/mcp.json) or Cursor (.cursor/mcp.json, same entry under "mcpServers"):
  ${client}

Stop with Ctrl+C.
`;
}
