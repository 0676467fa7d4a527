import { describe, expect, it } from "vitest";
import { runChaos } from "../bench/lib/chaos.mjs";

describe("confirmed writes under faults (the short variant of npm run chaos)", () => {
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
    // The faults really happened: failures before the route, drops after it, expired bearers.
    expect(report.injected.failed_500_503).toBeGreaterThan(5);
    expect(report.injected.dropped_after_apply).toBeGreaterThan(0);
    expect(report.token_exchanges).toBeGreaterThan(1);
  }, 60_000);
});
