import { describe, expect, it } from "vitest";
import { DEMO_KEYS } from "../src/index.js";
import { PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false });

describe("the entity's settings", () => {
  it("reads the three parts, consistent with the seeded alerts' thresholds", async () => {
    const business = await env.client.get("/settings/business");
    expect(business.status).toBe(200);
    expect(business.body).toMatchObject({
      legal_name: "Aurore Capital Partners SAS",
      base_currency: "EUR",
      ltv_covenant_max_pct: "55.00",
      dscr_floor: "0.85",
    });
    expect(business.body.siren).toMatch(/^\d{9}$/);
    const reporting = await env.client.get("/settings/reporting");
    expect(reporting.body).toMatchObject({ frequency: "quarterly", inrev_export_enabled: true });
    const branding = await env.client.get("/settings/branding");
    expect(branding.body.primary_color).toMatch(/^#[0-9A-F]{6}$/);
  });

  it("changes what is sent, clears nullable fields sent as null, keeps the rest", async () => {
    const before = (await env.client.get("/settings/branding")).body;
    const reply = await env.client.write("PATCH", "/settings/branding", {
      primary_color: "#0B2545",
      secondary_color: null,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      primary_color: "#0B2545",
      secondary_color: null,
      display_name: before.display_name,
      logo_url: before.logo_url,
      updated_by: "apikey:sandboxdemo",
    });
    expect(Date.parse(reply.body.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
    expect((await env.client.get("/settings/branding")).body).toEqual(reply.body);
    const recipients = ["direction@aurore-capital.example"];
    const reporting = await env.client.write("PATCH", "/settings/reporting", { recipients });
    expect(reporting.body.recipients).toEqual(recipients);
  });

  it("refuses null where a field is not nullable, nothing to change, and each broken rule", async () => {
    const cases: Array<[string, unknown, string]> = [
      ["business", { legal_name: null }, "legal_name"],
      ["business", { siren: "732829321" }, "siren"],
      ["business", { ltv_covenant_max_pct: "120" }, "ltv_covenant_max_pct"],
      ["business", { ltv_covenant_max_pct: 55 }, "ltv_covenant_max_pct"],
      ["business", { base_currency: "USD" }, "base_currency"],
      ["reporting", { recipients: ["not-an-address"] }, "recipients[0]"],
      ["reporting", { deadline_days: 0 }, "deadline_days"],
      ["branding", { logo_url: "http://static.aurore-capital.example/logo.svg" }, "logo_url"],
      ["branding", { primary_color: "navy" }, "primary_color"],
      ["branding", { updated_by: "me" }, "updated_by"],
      ["branding", {}, "body"],
    ];
    for (const [part, body, field] of cases) {
      const reply = await env.client.write("PATCH", `/settings/${part}`, body);
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.body.errors[0].field, JSON.stringify(body)).toBe(field);
    }
    // A valid SIREN is taken, and an AMF number cleared.
    const ok = await env.client.write("PATCH", "/settings/business", {
      siren: "732829320",
      amf_approval_number: null,
    });
    expect(ok.body).toMatchObject({ siren: "732829320", amf_approval_number: null });
  });

  it("keeps writes to keys with settings:write", async () => {
    const readOnly = PartnerTestClient.for(env.sandbox, DEMO_KEYS.readOnly);
    expect((await readOnly.get("/settings/reporting")).status).toBe(200);
    const refused = await readOnly.write("PATCH", "/settings/reporting", { deadline_days: 30 });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      reason_code: "insufficient_scope",
      scope: "settings:write",
      route_id: "settings_reporting_update",
    });
  });
});
