#!/usr/bin/env node
// npm run bench:telemetry: the per-call cost of the audit trail and of tracing (issue 24), alone;
// `npm run bench` measures it too, with the rest. A sandbox in its own process; four stdio
// servers (off, audit trail, audit + tracing at 0% and at 100% sampling), calls interleaved.
// Writes build/bench/telemetry.json (or --out).
//   npm run bench:telemetry [-- --quick] [--out FILE]
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEMO_KEYS } from "@portfolio-mcp/sandbox";
import { stopChildren } from "../scripts/lib/children.mjs";
import { QUOTAS_RAISED } from "./lib/fleet.mjs";
import { sandboxProcess } from "./lib/processes.mjs";
import { writeResults } from "./lib/results.mjs";
import { printTelemetry, TELEMETRY_TARGET, telemetryOverhead } from "./lib/telemetry-overhead.mjs";

const { values: options } = parseArgs({
  options: { out: { type: "string" }, quick: { type: "boolean", default: false } },
});
const root = new URL("..", import.meta.url).pathname;
const key = { ...DEMO_KEYS.full, tokenTtlSeconds: 60 };
const sandbox = await sandboxProcess({ rateLimit: false, keys: [key], requestLogLimit: 1000 });
try {
  const result = await telemetryOverhead({
    node: process.execPath,
    cli: join(root, "dist", "cli.js"),
    env: {
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: key.keyId,
      PORTFOLIO_API_SECRET: key.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: "camille.martin@aurore-capital.example",
      PORTFOLIO_LOG_LEVEL: "warn",
      ...QUOTAS_RAISED,
    },
    work: join(root, "build", "bench"),
    calls: options.quick ? 300 : 2_000,
    block: 50,
    args: { status: "active", limit: 50 },
  });
  const met = result.audit_traced_0.vs_off.p50 <= TELEMETRY_TARGET;
  console.log(
    `${printTelemetry(result)}\ntarget: ${met ? "met   " : "MISSED"} audit + tracing at 0% within ${TELEMETRY_TARGET}x of off (p50)`,
  );
  writeResults(
    { date: new Date().toISOString(), telemetry_overhead: result, target_met: met },
    options,
    { fresh: "build/bench/telemetry.json", reference: "build/bench/telemetry.json" },
  );
} finally {
  await sandbox.close();
  await stopChildren();
}
