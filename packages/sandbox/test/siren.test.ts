import { describe, expect, it } from "vitest";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false });

describe("deleting a SIREN from the cache (spec part 4)", () => {
  it("forgets a cached resolution without resolving it again", async () => {
    const cached = env.data.sirenRecords.find((r) => r.source === "cache")!;
    const billed = env.sandbox.control.state.billableResolutions;
    expect((await env.client.get(`/enrichment/siren/${cached.siren}`)).body.source).toBe("cache");
    const del = () =>
      env.client.call("DELETE", `/enrichment/siren/${cached.siren}/cache`, {
        idempotencyKey: `test-${Math.random()}`,
      });
    const deleted = await del();
    expect(deleted.status).toBe(204);
    const read = await env.client.get(`/enrichment/siren/${cached.siren}`);
    expect(read.status).toBe(404);
    expect(read.body.reason_code).toBe("siren_not_found_locally");
    expect(env.sandbox.control.state.billableResolutions).toBe(billed);
    const again = await del();
    expect(again.status).toBe(404);
    expect(again.body.reason_code).toBe("siren_not_cached");
  });

  it("falls back to the local record a resolution had covered", async () => {
    const local = env.data.sirenRecords.find((r) => r.source === "local")!;
    const resolved = await env.client.write(
      "POST",
      `/enrichment/siren/${local.siren}/resolve`,
      undefined,
    );
    expect(resolved.status).toBe(200);
    expect((await env.client.get(`/enrichment/siren/${local.siren}`)).body.source).toBe("cache");
    const billed = env.sandbox.control.state.billableResolutions;
    const deleted = await env.client.call("DELETE", `/enrichment/siren/${local.siren}/cache`, {
      idempotencyKey: `test-${Math.random()}`,
    });
    expect(deleted.status).toBe(204);
    const read = await env.client.get(`/enrichment/siren/${local.siren}`);
    expect(read.body).toMatchObject({ source: "local", denomination: local.denomination });
    expect(env.sandbox.control.state.billableResolutions).toBe(billed);
    const never = await env.client.call("DELETE", `/enrichment/siren/${local.siren}/cache`, {
      idempotencyKey: `test-${Math.random()}`,
    });
    expect(never.body.reason_code).toBe("siren_not_cached");
  });
});
