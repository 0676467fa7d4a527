import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { runChaos } from "../bench/lib/chaos.mjs";

describe("confirmed writes under faults, curated and long-tail (the short variant of npm run chaos)", () => {
  it("neither duplicates nor loses a confirmed write", async () => {
    const report = await runChaos({
      writes: 80,
      workers: 8,
      burstEveryMs: 1_500,
      expireEveryMs: 200,
    });
    expect(report, JSON.stringify(report)).toMatchObject({
      confirmed: 80,
      records: 80,
      duplicates: 0,
      lost_confirmed_writes: 0,
      failed: 0,
      unfinished: 0,
    });
    // Half went through the long tail (draft_api_write, then confirm_write), counted apart:
    // each applied once, and every delivery of an intent carried the same keys.
    expect(report.curated).toMatchObject({
      requested: 40,
      confirmed: 40,
      records: 40,
      duplicates: 0,
      lost_confirmed_writes: 0,
    });
    expect(report.long_tail).toMatchObject({
      operations: ["task_create", "calendar_event_create"],
      requested: 40,
      confirmed: 40,
      records: 40,
      duplicates: 0,
      lost_confirmed_writes: 0,
      sent_under_several_idempotency_keys: 0,
      sent_under_several_client_request_ids: 0,
    });
    expect(report.long_tail.requests_sent).toBeGreaterThan(40);
    // The faults really happened: failures before the route, drops after it, expired bearers.
    expect(report.injected.failed_500_503).toBeGreaterThan(5);
    expect(report.injected.dropped_after_apply).toBeGreaterThan(0);
    expect(report.token_exchanges).toBeGreaterThan(1);
  }, 60_000);
});

describe("the fleet modes of npm run chaos and npm run load", () => {
  it.each([["bench/chaos.mjs"], ["bench/load.mjs"]])(
    "%s --fleet says in one sentence that no Redis answers, and exits 1",
    (script) => {
      const result = spawnSync(
        process.execPath,
        [
          new URL(`../${script}`, import.meta.url).pathname,
          "--fleet",
          "--redis",
          "redis://:pw@127.0.0.1:1/0",
        ],
        { encoding: "utf8", timeout: 30_000 },
      );
      expect(result.status).toBe(1);
      expect(result.stderr.trim()).toMatch(
        /^(chaos|load) --fleet needs a Redis and none answers at 127\.0\.0\.1:1: start one \(redis-server\) or pass --redis redis:\/\/host:port\/db\.$/,
      );
      expect(result.stderr).not.toContain("pw@");
    },
  );
});
