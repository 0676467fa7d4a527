import { type ApiClientOptions, connectApi } from "../../src/api/client.js";
import type { ApiSettings } from "../../src/config.js";
import { createLogger, SecretRedactor } from "../../src/log.js";
import type { Sandbox } from "../../src/sandbox/index.js";

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
    ...overrides,
  };
}

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
