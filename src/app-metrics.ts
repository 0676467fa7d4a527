import type { ApiClient } from "./api/client.js";
import type { UpstreamOptions } from "./api/upstream.js";
import type { Metrics } from "./telemetry/metrics.js";

/** The Partner API's latency buckets: OpenTelemetry's for http.client.request.duration, and 30 s. */
const UPSTREAM_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30,
];

/** What the API client reports of each attempt and each wait for its turn, as metrics. */
export function upstreamMetrics(
  metrics: Metrics,
): Pick<UpstreamOptions, "onAttempt" | "shareEvents"> {
  const calls = metrics.counter(
    "portfolio_mcp_upstream_calls",
    "Partner API attempts, by operation and status.",
  );
  const seconds = metrics.histogram(
    "portfolio_mcp_upstream_request_duration",
    "Partner API attempts, by operation and status class (none: no answer).",
    { unit: "s", buckets: UPSTREAM_BUCKETS },
  );
  const waits = metrics.counter(
    "portfolio_mcp_upstream_waits",
    "Partner API attempts that waited for their client's turn, by reason.",
  );
  const waitSeconds = metrics.counter(
    "portfolio_mcp_upstream_wait_seconds",
    "Time attempts spent waiting for their client's turn, by reason.",
    { unit: "s" },
  );
  const refusals = metrics.counter(
    "portfolio_mcp_upstream_refusals",
    "Partner API attempts refused before sending (the wait would pass its deadline), by reason.",
  );
  return {
    onAttempt: (operation, status, ms) => {
      calls({ operation, status: status === null ? "none" : String(status) });
      const statusClass = status === null ? "none" : `${Math.floor(status / 100)}xx`;
      seconds(ms / 1000, { operation, status_class: statusClass });
    },
    shareEvents: {
      waited: (reason, ms) => {
        waits({ reason });
        waitSeconds({ reason }, ms / 1000);
      },
      refused: (reason) => refusals({ reason }),
    },
  };
}

/** The API client's state (exchanges, the 429 cooldown, the key's rate) and the process's. */
export function clientAndProcessMetrics(metrics: Metrics, api: ApiClient): void {
  metrics.counterFrom(
    "portfolio_mcp_token_exchanges",
    "Signed token exchanges sent since start.",
    () => api.tokens.exchanges,
  );
  // Whether this replica holds back for a 429, its own or another replica's (Redis).
  metrics.gauge(
    "portfolio_mcp_upstream_cooldown_seconds",
    "Seconds before calls to the Partner API may go again after a 429.",
    () => api.cooldownRemainingMs() / 1000,
    "s",
  );
  metrics.gauge(
    "portfolio_mcp_upstream_rate_per_minute",
    "The API key's rate in force: PORTFOLIO_API_RATE_LIMIT_PER_MINUTE, lowered for a while after 429s.",
    () => api.keyRatePerMinute(),
  );
  // Process figures, so that an operator (and `npm run load`) can see sessions come and go.
  metrics.counterFrom(
    "process_cpu_seconds",
    "User and system CPU time spent.",
    () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    },
    "s",
  );
  metrics.gauge(
    "process_resident_memory_bytes",
    "Resident set size of the process.",
    () => process.memoryUsage.rss(),
    "By",
  );
  metrics.gauge(
    "nodejs_heap_used_bytes",
    "V8 heap in use.",
    () => process.memoryUsage().heapUsed,
    "By",
  );
}
