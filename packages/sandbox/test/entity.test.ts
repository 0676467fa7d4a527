import { describe, expect, it } from "vitest";
import { DEMO_KEYS, DEMO_USERS } from "../src/index.js";
import { checkSiren } from "../src/siren.js";
import { PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false });

describe("the integration context", () => {
  it("names the entity, the environment and what the calling key may do", async () => {
    const full = await env.client.get("/context");
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({
      entity: { id: env.data.entity.id, name: "Aurore Capital Partners", currency: "EUR" },
      environment: "sandbox",
      api_version: "v1",
      key: {
        key_id: "sandboxdemo",
        routes: null,
        delegated_user_ids: DEMO_KEYS.full.delegatedUsers,
      },
      business_date: new Date().toISOString().slice(0, 10),
    });
    const manager = await PartnerTestClient.for(env.sandbox, DEMO_KEYS.portfolioManager).get(
      "/context",
    );
    expect(manager.body.key.key_id).toBe("sandboxpm");
    expect(manager.body.key.routes).toContain("context_get");
    expect(manager.body.key.delegated_user_ids).toEqual([DEMO_USERS.camille, DEMO_USERS.julien]);
    const limited = await PartnerTestClient.for(env.sandbox, DEMO_KEYS.limited).get("/context");
    expect(limited.status).toBe(403);
    expect(limited.body.route_id).toBe("context_get");
  });
});

describe("the RCCI summary", () => {
  it("computes each control from the live data, worst first", async () => {
    const { status, body } = await env.client.get("/rcci/summary");
    expect(status).toBe(200);
    const ranks = body.controls.map((c: any) =>
      ["non_conforme", "a_surveiller", "conforme"].indexOf(c.status),
    );
    expect(ranks).toEqual([...ranks].sort());
    const control = (code: string) => body.controls.find((c: any) => c.code === code);
    const badSirens = env.data.operators.filter(
      (o) => o.siren && !checkSiren(o.siren).valid,
    ).length;
    expect(badSirens).toBeGreaterThan(0);
    expect(control("identification_contreparties")).toMatchObject({
      status: "non_conforme",
      findings: badSirens,
    });
    expect(body.operators.siren_invalid).toBe(badSirens);
    expect(control("contentieux_operateurs").findings).toBe(
      env.data.operators.filter((o) => o.litiges_en_cours).length,
    );
    const unclosed = env.data.alerts.filter(
      (a) => !["resolved", "false_positive"].includes(a.status),
    );
    expect(body.alerts.unclosed).toBe(unclosed.length);
    const live = env.data.operations.filter(
      (o) => !["remboursee", "cloturee", "abandonnee"].includes(o.status),
    );
    expect(body.operations.live).toBe(live.length);
    const counted = body.operations.by_internal_status.reduce(
      (n: number, g: any) => n + g.count,
      0,
    );
    expect(counted).toBe(live.length);
    for (const item of body.operations.watchlist)
      expect(["alerte", "precontentieux"]).toContain(item.statut_interne);
  });

  it("follows writes: a critical third-party risk, then its closing", async () => {
    const before = (await env.client.get("/rcci/summary")).body;
    const operator = env.data.operators.find((o) => o.siren && checkSiren(o.siren).valid)!;
    const risk = await env.client.write("POST", `/operateurs/${operator.id}/third-party-risks`, {
      category: "sanctions",
      level: "critique",
      title: "Dirigeant cité dans une procédure de gel des avoirs",
    });
    const during = (await env.client.get("/rcci/summary")).body;
    expect(during.third_party_risks.by_level.critique).toBe(
      before.third_party_risks.by_level.critique + 1,
    );
    expect(during.controls.find((c: any) => c.code === "risques_tiers").status).toBe(
      "non_conforme",
    );
    await env.client.write(
      "PATCH",
      `/operateurs/${operator.id}/third-party-risks/${risk.body.id}`,
      {
        status: "clos",
      },
    );
    const after = (await env.client.get("/rcci/summary")).body;
    expect(after.third_party_risks).toEqual(before.third_party_risks);
  });
});
