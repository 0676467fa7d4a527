import { type DestinationStream, pino } from "pino";

/** Field names whose values never reach a log line, at any depth. */
const SENSITIVE_KEYS = new Set([
  "secret",
  "api_secret",
  "apisecret",
  "signature",
  "authorization",
  "access_token",
  "accesstoken",
  "share_token",
  "sharetoken",
  "token",
  "bearer",
  "password",
]);
const REDACTED = "[redacted]";
const BEARER_PATTERN = /\b(Bearer)\s+[^\s"',;]+/gi;
/** `"share_token": "…"`, `signature=…` and the like, inside free text such as an echoed request. */
const ASSIGNMENT_PATTERN =
  /(["']?\b(?:api_secret|secret|signature|access_token|share_token|password)["']?\s*[:=]\s*["']?)[^\s"'&,;}]+/gi;

/**
 * Values known to be secret (the API secret, bearers as they are issued), scrubbed from every
 * string that reaches a log line, wherever it sits. Bounded: old bearers age out.
 */
export class SecretRedactor {
  private readonly values = new Set<string>();

  add(value: string): void {
    if (value.length < 8) return; // too short to scrub without mangling ordinary text
    this.values.add(value);
    if (this.values.size > 64) this.values.delete(this.values.values().next().value as string);
  }

  scrub(text: string): string {
    let out = text
      .replace(BEARER_PATTERN, `$1 ${REDACTED}`)
      .replace(ASSIGNMENT_PATTERN, `$1${REDACTED}`);
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join(REDACTED);
    return out;
  }

  /** A deep copy with sensitive keys censored and secret values scrubbed from strings. */
  redact(value: unknown, depth = 0): unknown {
    if (typeof value === "string") return this.scrub(value);
    if (depth > 8 || value === null || typeof value !== "object") return value;
    if (value instanceof Error)
      return this.redact({ type: value.name, message: value.message }, depth + 1);
    if (Array.isArray(value)) return value.map((v) => this.redact(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      out[key] = SENSITIVE_KEYS.has(key.toLowerCase().replace(/-/g, "_"))
        ? REDACTED
        : this.redact(v, depth + 1);
    }
    return out;
  }
}

export interface LoggerOptions {
  level?: string;
  redactor?: SecretRedactor;
  /** Where lines go; stderr unless a test captures them. */
  destination?: DestinationStream;
}

/**
 * Every log line goes to stderr: in stdio mode stdout belongs to the protocol. Secrets are
 * censored by key and scrubbed by value before a line is written.
 */
export function createLogger(options: LoggerOptions = {}) {
  const redactor = options.redactor ?? new SecretRedactor();
  return pino(
    {
      level: options.level ?? process.env.PORTFOLIO_LOG_LEVEL ?? "info",
      base: undefined,
      formatters: { log: (object) => redactor.redact(object) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === "string" ? redactor.scrub(a) : a));
          method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

export type Logger = ReturnType<typeof createLogger>;
