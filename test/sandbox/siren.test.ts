import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { PartnerTestClient } from "../helpers/partner-client.js";

let sandbox: Sandbox;
let client: PartnerTestClient;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  client = PartnerTestClient.for(sandbox);
});
afterAll(() => sandbox.close());

const data = () => sandbox.control.state.data;

describe("deleting a SIREN from the cache (spec part 4)", () => {
  it("forgets a cached resolution without resolving it again", async () => {
    const cached = data().sirenRecords.find((r) => r.source === "cache")!;
    const billed = sandbox.control.state.billableResolutions;
    expect((await client.get(`/enrichment/siren/${cached.siren}`)).body.source).toBe("cache");
    const del = () =>
      client.call("DELETE", `/enrichment/siren/${cached.siren}/cache`, {
        idempotencyKey: `test-${Math.random()}`,
      });
    const deleted = await del();
    expect(deleted.status).toBe(204);
    const read = await client.get(`/enrichment/siren/${cached.siren}`);
    expect(read.status).toBe(404);
    expect(read.body.reason_code).toBe("siren_not_found_locally");
    expect(sandbox.control.state.billableResolutions).toBe(billed);
    const again = await del();
    expect(again.status).toBe(404);
    expect(again.body.reason_code).toBe("siren_not_cached");
  });

  it("falls back to the local record a resolution had covered", async () => {
    const local = data().sirenRecords.find((r) => r.source === "local")!;
    const resolved = await client.write(
      "POST",
      `/enrichment/siren/${local.siren}/resolve`,
      undefined,
    );
    expect(resolved.status).toBe(200);
    expect((await client.get(`/enrichment/siren/${local.siren}`)).body.source).toBe("cache");
    const billed = sandbox.control.state.billableResolutions;
    const deleted = await client.call("DELETE", `/enrichment/siren/${local.siren}/cache`, {
      idempotencyKey: `test-${Math.random()}`,
    });
    expect(deleted.status).toBe(204);
    const read = await client.get(`/enrichment/siren/${local.siren}`);
    expect(read.body).toMatchObject({ source: "local", denomination: local.denomination });
    expect(sandbox.control.state.billableResolutions).toBe(billed);
    const never = await client.call("DELETE", `/enrichment/siren/${local.siren}/cache`, {
      idempotencyKey: `test-${Math.random()}`,
    });
    expect(never.body.reason_code).toBe("siren_not_cached");
  });
});
