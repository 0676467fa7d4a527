import { DiagLogLevel, diag } from "@opentelemetry/api";
import type { Logger } from "../log.js";

/** A collector that stays down would otherwise be told once per export: once a minute is enough. */
const REPEAT_AFTER_MS = 60_000;

/**
 * The SDK's own warnings and errors (an export the collector refused, a collector that cannot be
 * reached) as log lines, rather than nowhere: by default OpenTelemetry says nothing.
 */
export function forwardDiagnostics(logger: Logger): void {
  const said = new Map<string, number>();
  const say =
    (level: "warn" | "error") =>
    (message: string, ...args: unknown[]) => {
      const now = Date.now();
      if (now - (said.get(message) ?? Number.NEGATIVE_INFINITY) < REPEAT_AFTER_MS) return;
      said.set(message, now);
      const detail = args.map((a) => (a instanceof Error ? a.message : String(a))).join(" ");
      logger[level]({ detail: detail || undefined }, `telemetry: ${message}`);
    };
  const quiet = () => {};
  diag.setLogger(
    { error: say("error"), warn: say("warn"), info: quiet, debug: quiet, verbose: quiet },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}
