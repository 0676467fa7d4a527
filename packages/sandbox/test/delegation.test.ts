import { describe, expect, it } from "vitest";
import { DEMO_KEYS, DEMO_USERS, startSandbox } from "../src/index.js";
import { asUser, PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({
  keys: [
    ...Object.values(DEMO_KEYS).map((k) => structuredClone(k)),
    {
      keyId: "nobodykey",
      secret: "nobody-secret",
      label: "empty allowlist",
      scopes: ["users:read", "users:write"],
      capabilities: ["user_self_service", "saved_views", "custom_dashboards"],
      delegatedUsers: [],
    },
    {
      keyId: "viewsonly",
      secret: "views-secret",
      label: "saved views only",
      scopes: ["users:read", "users:write"],
      capabilities: ["saved_views"],
      delegatedUsers: [DEMO_USERS.camille],
    },
  ],
});

const user = (id: string) => {
  const found = env.data.users.find((u) => u.id === id);
  if (!found) throw new Error(`no demo user ${id}`);
  return found;
};

describe("delegation headers on /users/me* (spec part 5)", () => {
  it("acts for the user named by email (case-insensitive) or by id", async () => {
    const byEmail = await env.client.get("/users/me", {
      delegate: "none",
      headers: { "X-Service-Delegated-User-Email": "  Camille.Martin@Aurore-Capital.example " },
    });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body.id).toBe(DEMO_USERS.camille);
    const byId = await env.client.get("/users/me", { delegate: "id" });
    expect(byId.body.email).toBe("camille.martin@aurore-capital.example");
  });

  it("answers 400 when no header or both headers are sent", async () => {
    const none = await env.client.get("/users/me", { delegate: "none" });
    expect(none.status).toBe(400);
    expect(none.body.reason_code).toBe("delegation_header_missing");
    const both = await env.client.get("/users/me/saved-views", {
      delegate: "email",
      headers: { "X-Service-Delegated-User-Id": DEMO_USERS.camille },
    });
    expect(both.status).toBe(400);
    expect(both.body.reason_code).toBe("delegation_headers_conflict");
  });

  it("answers 404 for a user outside the entity", async () => {
    const stranger = asUser(env.client, { email: "nobody@elsewhere.example", id: "usr_nobody" });
    const reply = await stranger.get("/users/me");
    expect(reply.status).toBe(404);
    expect(reply.body.reason_code).toBe("delegated_user_not_found");
  });

  it.each([
    ["suspended", DEMO_USERS.sophie, "delegated_user_not_approved"],
    ["invited", DEMO_USERS.lea, "delegated_user_not_approved"],
    ["not on the key's allowlist", DEMO_USERS.thomas, "delegated_user_not_allowed"],
  ])("answers 403 for a %s user", async (_case, id, reason) => {
    const reply = await asUser(env.client, user(id)).get("/users/me");
    expect(reply.status).toBe(403);
    expect(reply.body.reason_code).toBe(reason);
  });

  it("treats an empty allowlist as nobody", async () => {
    const nobody = asUser(
      new PartnerTestClient(env.sandbox.baseUrl, { keyId: "nobodykey", secret: "nobody-secret" }),
      user(DEMO_USERS.camille),
    );
    const reply = await nobody.get("/users/me");
    expect(reply.status).toBe(403);
    expect(reply.body.reason_code).toBe("delegated_user_not_allowed");
  });

  it("requires the route's capability on the key", async () => {
    const viewsOnly = asUser(
      new PartnerTestClient(env.sandbox.baseUrl, { keyId: "viewsonly", secret: "views-secret" }),
      user(DEMO_USERS.camille),
    );
    expect((await viewsOnly.get("/users/me/saved-views")).status).toBe(200);
    const dashboards = await viewsOnly.get("/users/me/custom-dashboards");
    expect(dashboards.status).toBe(403);
    expect(dashboards.body).toMatchObject({
      reason_code: "capability_missing",
      route_id: "custom_dashboards_list",
    });
    expect(dashboards.body.detail).toContain("custom_dashboards");
  });

  it("lets a read-only user read but not write", async () => {
    const julien = asUser(env.client, user(DEMO_USERS.julien));
    expect((await julien.get("/users/me/custom-dashboards")).status).toBe(200);
    const write = await julien.write("POST", "/users/me/custom-dashboards", { name: "Refusé" });
    expect(write.status).toBe(403);
    expect(write.body.reason_code).toBe("delegated_user_read_only");
  });

  it("sends no delegation requirement to routes outside /users/me", async () => {
    expect((await env.client.get("/taxonomies", { delegate: "none" })).status).toBe(200);
  });

  it("uses the configured header prefix", async () => {
    const acme = await startSandbox({ delegationHeaderPrefix: "X-Acme-Delegated-User" });
    try {
      const c = PartnerTestClient.for(acme);
      expect((await c.get("/users/me")).status).toBe(200);
      const legacy = await c.get("/users/me", {
        delegate: "none",
        headers: { "X-Service-Delegated-User-Email": acme.credentials.delegatedUserEmail },
      });
      expect(legacy.status).toBe(400);
    } finally {
      await acme.close();
    }
  });
});

describe("ownership of saved views and dashboards", () => {
  it("shows each user only their own views and dashboards", async () => {
    const camille = asUser(env.client, user(DEMO_USERS.camille));
    const julien = asUser(env.client, user(DEMO_USERS.julien));
    const camilleViews = (await camille.get("/users/me/saved-views")).body;
    const julienViews = (await julien.get("/users/me/saved-views")).body;
    expect(camilleViews.total).toBe(3);
    expect(julienViews.total).toBe(1);
    expect(
      camilleViews.items.every((v: { user_id: string }) => v.user_id === DEMO_USERS.camille),
    ).toBe(true);
    expect(julienViews.items[0].user_id).toBe(DEMO_USERS.julien);

    const created = await camille.write("POST", "/users/me/custom-dashboards", { name: "Privé" });
    const julienDashboards = (await julien.get("/users/me/custom-dashboards")).body.items;
    expect(julienDashboards.map((d: { id: string }) => d.id)).not.toContain(created.body.id);
    const camilleDashboards = (await camille.get("/users/me/custom-dashboards")).body.items;
    expect(camilleDashboards.map((d: { id: string }) => d.id)).toContain(created.body.id);
  });

  it("answers 404 when a user updates someone else's view", async () => {
    const julienView = env.data.savedViews.find((v) => v.user_id === DEMO_USERS.julien)!;
    const reply = await asUser(env.client, user(DEMO_USERS.camille)).write(
      "PATCH",
      `/users/me/saved-views/${julienView.id}`,
      {
        name: "Pris",
      },
    );
    expect(reply.status).toBe(404);
    expect(reply.body.reason_code).toBe("saved_view_not_found");
    expect(julienView.name).toBe("Mes dossiers résidentiels");
  });
});
