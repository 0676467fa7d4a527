import { pino } from "pino";

/**
 * Every log line goes to stderr: in stdio mode stdout belongs to the protocol. Known secret
 * fields are censored wherever pino meets them.
 */
export function createLogger(level = process.env.PORTFOLIO_LOG_LEVEL ?? "info") {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          "secret",
          "*.secret",
          "signature",
          "*.signature",
          "access_token",
          "*.access_token",
          "share_token",
          "*.share_token",
          "authorization",
          "*.authorization",
          "headers.authorization",
        ],
        censor: "[redacted]",
      },
    },
    pino.destination({ fd: 2, sync: true }),
  );
}

export type Logger = ReturnType<typeof createLogger>;
