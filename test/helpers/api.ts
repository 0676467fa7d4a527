import type { Sandbox } from "@portfolio-mcp/sandbox";
import type { Operation } from "../../src/api/catalogue.js";
import type { ApiClientOptions } from "../../src/api/client.js";
import { connectApi } from "../../src/api/client.js";
import { normaliseContract } from "../../src/api/contract/load.js";
import { resolveRoutes } from "../../src/api/routes.js";
import type { ApiSettings } from "../../src/config.js";
import { createLogger, SecretRedactor } from "../../src/log.js";

/** Settings for a client of this sandbox, acting for its demo user. */
export function apiSettings(sandbox: Sandbox, overrides: Partial<ApiSettings> = {}): ApiSettings {
  const c = sandbox.credentials;
  return {
    baseUrl: sandbox.baseUrl,
    keyId: c.keyId,
    secret: c.secret,
    tokenPrefix: c.tokenPrefix,
    delegationHeaderPrefix: c.delegationHeaderPrefix,
    delegatedUser: { email: c.delegatedUserEmail },
    routesFile: null,
    contractFile: null,
    timeoutMs: 10_000,
    maxRetries: 3,
    maxRetryWaitSeconds: 30,
    // The server's defaults: each client's share of the key's rate, as a deployment has it.
    rateLimitPerMinute: 600,
    sharePerClient: 0.5,
    maxInFlightPerClient: 8,
    maxResponseBytes: 20_971_520,
    ...overrides,
  };
}

/**
 * For tests of something else under heavy concurrency (one renewal for 200 calls at once):
 * each client's share of the key's rate raised out of the way. The share has tests of its own.
 */
export const SHARE_RAISED: Partial<ApiSettings> = {
  rateLimitPerMinute: 1_000_000,
  sharePerClient: 1,
  maxInFlightPerClient: 1_000,
};

/** Log lines as written, for assertions on what a run printed. */
export function capturedLogger(level = "debug") {
  const lines: string[] = [];
  const redactor = new SecretRedactor();
  const logger = createLogger({
    level,
    redactor,
    destination: { write: (line: string) => lines.push(line) },
  });
  return { logger, redactor, lines, text: () => lines.join("") };
}

export function clientFor(
  sandbox: Sandbox,
  overrides: Partial<ApiSettings> = {},
  options: Partial<Omit<ApiClientOptions, "settings">> = {},
) {
  const logs = capturedLogger();
  const api = connectApi({
    settings: apiSettings(sandbox, overrides),
    logger: logs.logger,
    redactor: logs.redactor,
    ...options,
  });
  return { api, logs };
}

/**
 * The routes a server builds from a key's contract export, fetched from the sandbox's
 * administration route as an operator would export it (default: the sandbox's own key).
 */
export async function contractRoutes(
  sandbox: Sandbox,
  keyId = sandbox.credentials.keyId,
): Promise<ReadonlyMap<string, Operation>> {
  const url = new URL(`/_admin/keys/${encodeURIComponent(keyId)}/contract.json`, sandbox.baseUrl);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
  return resolveRoutes(null, normaliseContract(await response.json(), `${keyId}'s export`));
}
