import { describe, expect, it } from "vitest";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false });

describe("one taxonomy dimension", () => {
  it("is served with its codes, and an unknown one is 404 naming the others", async () => {
    const reply = await env.client.get("/taxonomies/asset_class");
    expect(reply.status).toBe(200);
    expect(reply.body.values.map((v: any) => v.code)).toContain("residentiel");
    const all = await env.client.get("/taxonomies");
    expect(all.body.dimensions.find((d: any) => d.dimension === "asset_class")).toEqual(reply.body);
    const unknown = await env.client.get("/taxonomies/chateaux");
    expect(unknown.status).toBe(404);
    expect(unknown.body.reason_code).toBe("taxonomy_not_found");
    expect(unknown.body.detail).toContain("operation_status");
    const invalid = await env.client.get("/taxonomies/Asset-Class");
    expect(invalid.status).toBe(422);
  });
});
