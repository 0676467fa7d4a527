import type { Observer, RequestEvent } from "../events.js";
import type { Metrics } from "./metrics.js";

/**
 * The OpenTelemetry MCP semantic conventions' buckets for mcp.server.operation.duration, with
 * three below 10 ms: most calls here take a few milliseconds.
 */
const OPERATION_BUCKETS = [
  0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
];

/**
 * Telemetry as an observer of the same events the audit trail records (src/events.ts): how long
 * each MCP request took, by method, tool and error type; drafts; decisions by channel; deliveries
 * by outcome; refused sign-ins by reason. Counts only: no user, no argument, no id.
 */
export function telemetrySink(metrics: Metrics): Observer {
  const duration = metrics.histogram(
    "mcp.server.operation.duration",
    "MCP requests served, by method, tool or prompt, and error type (OpenTelemetry MCP semantic conventions).",
    { unit: "s", buckets: OPERATION_BUCKETS },
  );
  const drafts = metrics.counter(
    "portfolio_mcp_drafts",
    "Writes drafted (stored, awaiting the person's decision), by outcome.",
    { zeros: [{ outcome: "drafted" }] },
  );
  const decisions = metrics.counter(
    "portfolio_mcp_confirmations",
    "Decisions on drafted writes (confirmed, cancelled, declined, expired, refused), by channel.",
  );
  const deliveries = metrics.counter(
    "portfolio_mcp_deliveries",
    "Confirmed writes, by what came of sending them: delivered, refused, uncertain, recovered.",
    { zeros: ["delivered", "refused", "uncertain", "recovered"].map((outcome) => ({ outcome })) },
  );
  const refusals = metrics.counter(
    "portfolio_mcp_auth_refusals",
    "Requests refused at authentication, by reason (never by user).",
  );
  return {
    request(e) {
      duration(e.durationMs / 1000, operationLabels(e));
    },
    write(e) {
      if (e.step === "draft") drafts({ outcome: e.outcome });
      else if (e.step === "decision") decisions({ channel: e.channel, decision: e.outcome });
      else deliveries({ outcome: e.outcome });
    },
    signInRefused(e) {
      refusals({ reason: e.reason });
    },
  };
}

/**
 * The semantic conventions' attributes. A resource URI is left out (one series per record), and
 * so is a name the request was refused for (a client could invent any number of them).
 */
function operationLabels(e: RequestEvent): Record<string, string> {
  const labels: Record<string, string> = { "mcp.method.name": e.method };
  const name = e.errorType?.startsWith("protocol_error") ? "_OTHER" : e.target;
  if (name && e.method === "tools/call") labels["gen_ai.tool.name"] = name;
  if (name && e.method === "prompts/get") labels["gen_ai.prompt.name"] = name;
  if (e.errorType) labels["error.type"] = e.errorType;
  if (e.era) labels["mcp.protocol.version"] = e.era;
  return labels;
}
