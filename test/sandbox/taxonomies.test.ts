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

describe("one taxonomy dimension", () => {
  it("is served with its codes, and an unknown one is 404 naming the others", async () => {
    const reply = await client.get("/taxonomies/asset_class");
    expect(reply.status).toBe(200);
    expect(reply.body.values.map((v: any) => v.code)).toContain("residentiel");
    const all = await client.get("/taxonomies");
    expect(all.body.dimensions.find((d: any) => d.dimension === "asset_class")).toEqual(reply.body);
    const unknown = await client.get("/taxonomies/chateaux");
    expect(unknown.status).toBe(404);
    expect(unknown.body.reason_code).toBe("taxonomy_not_found");
    expect(unknown.body.detail).toContain("operation_status");
    const invalid = await client.get("/taxonomies/Asset-Class");
    expect(invalid.status).toBe(422);
  });
});
