import { describe, expect, it } from "vitest";
import { DEMO_USERS } from "../src/index.js";
import { asUser } from "./helpers/partner-client.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

const DAY_MS = 86_400_000;

// Each test starts from the seeded data. Bearers outlive the days the erasure test moves by.
const env = sandboxPerTest({ rateLimit: false, tokenTtlSeconds: 60 * 86_400 });

const user = (id: string) => {
  const found = env.data.users.find((u) => u.id === id);
  if (!found) throw new Error(`no user ${id}`);
  return found;
};
const del = (path: string) =>
  env.client.call("DELETE", path, { idempotencyKey: `del-${Math.random().toString(36).slice(2)}` });
const put = (path: string, body: unknown) =>
  env.client.call("PUT", path, {
    body,
    idempotencyKey: `put-${Math.random().toString(36).slice(2)}`,
  });
/** Moves the sandbox's clock; the client's bearer was taken before, and outlives the move. */
async function later(seconds: number) {
  await env.client.token();
  env.sandbox.control.skewClock(seconds);
}
const findKey = (value: unknown, key: string): boolean =>
  typeof value === "object" && value !== null
    ? Object.entries(value).some(([k, v]) => k === key || findKey(v, key))
    : false;

describe("the delegated user's profile and preferences", () => {
  it("changes the profile's name and job, never its address or status", async () => {
    const reply = await env.client.write("PATCH", "/users/me", {
      last_name: "Martin-Duval",
      timezone: "Europe/Brussels",
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      id: DEMO_USERS.camille,
      display_name: "Camille Martin-Duval",
      timezone: "Europe/Brussels",
      entity_id: env.data.entity.id,
    });
    expect(reply.body).not.toHaveProperty("invited_by");
    for (const field of ["email", "status", "read_only"]) {
      const refused = await env.client.write("PATCH", "/users/me", { [field]: "x" });
      expect(refused.status, field).toBe(422);
      expect(refused.body.errors[0].field).toBe(field);
    }
    const julien = asUser(env.client, user(DEMO_USERS.julien));
    const readOnly = await julien.write("PATCH", "/users/me", { job_title: "Analyste" });
    expect(readOnly.body.reason_code).toBe("delegated_user_read_only");
  });

  it("changes the preferences sent and keeps the others", async () => {
    const before = (await env.client.get("/users/me/preferences")).body;
    expect(before).toEqual({
      default_landing: "portfolio",
      number_format: "fr",
      density: "comfortable",
    });
    const reply = await env.client.write("PATCH", "/users/me/preferences", { density: "compact" });
    expect(reply.body).toEqual({ ...before, density: "compact" });
    expect((await env.client.get("/users/me")).body.preferences.density).toBe("compact");
    const bad = await env.client.write("PATCH", "/users/me/preferences", {
      default_landing: "home",
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe("default_landing");
  });

  it("mutes operations of the entity only, and replaces the list", async () => {
    const [first, second] = env.data.operations;
    const reply = await env.client.write("PATCH", "/users/me/alert-preferences", {
      muted_operation_ids: [first!.id.toUpperCase(), second!.id, first!.id],
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      email_digest: "daily",
      critical_push: true,
      muted_operation_ids: [first!.id, second!.id],
    });
    const unknown = await env.client.write("PATCH", "/users/me/alert-preferences", {
      muted_operation_ids: ["0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40"],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({
      reason_code: "reference_not_found",
      errors: [{ field: "muted_operation_ids[0]" }],
    });
    expect(
      (await env.client.get("/users/me/alert-preferences")).body.muted_operation_ids,
    ).toHaveLength(2);
  });
});

describe("saved views and dashboards belong to their owner", () => {
  it("gets and deletes one's own view; another user's is missing", async () => {
    const own = env.data.savedViews.find((v) => v.user_id === DEMO_USERS.camille)!;
    const theirs = env.data.savedViews.find((v) => v.user_id === DEMO_USERS.julien)!;
    expect((await env.client.get(`/users/me/saved-views/${own.id}`)).body.name).toBe(own.name);
    for (const reply of [
      await env.client.get(`/users/me/saved-views/${theirs.id}`),
      await del(`/users/me/saved-views/${theirs.id}`),
    ]) {
      expect(reply.status).toBe(404);
      expect(reply.body.reason_code).toBe("saved_view_not_found");
    }
    expect((await del(`/users/me/saved-views/${own.id}`)).status).toBe(204);
    expect((await env.client.get(`/users/me/saved-views/${own.id}`)).status).toBe(404);
    expect(env.data.savedViews.some((v) => v.id === theirs.id)).toBe(true);
  });

  it("changes a dashboard as sent: absent kept, null cleared", async () => {
    const own = env.data.dashboards.find(
      (d) => d.user_id === DEMO_USERS.camille && d.default_scope,
    )!;
    const reply = await env.client.write("PATCH", `/users/me/custom-dashboards/${own.id}`, {
      description: "Suivi trimestriel",
      default_scope: null,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      name: own.name,
      description: "Suivi trimestriel",
      default_scope: null,
      layout: own.layout,
    });
    const theirs = env.data.dashboards.find((d) => d.user_id === DEMO_USERS.julien)!;
    for (const reply of [
      await env.client.get(`/users/me/custom-dashboards/${theirs.id}`),
      await env.client.write("PATCH", `/users/me/custom-dashboards/${theirs.id}`, { name: "x" }),
      await put(`/users/me/custom-dashboards/${theirs.id}/sharing`, { visibility: "entity" }),
      await del(`/users/me/custom-dashboards/${theirs.id}`),
    ]) {
      expect(reply.status).toBe(404);
      expect(reply.body.reason_code).toBe("custom_dashboard_not_found");
    }
    expect((await del(`/users/me/custom-dashboards/${own.id}`)).status).toBe(204);
    expect((await env.client.get(`/users/me/custom-dashboards/${own.id}`)).status).toBe(404);
  });

  it("shares with members, revokes the link when private, issues a new one when shared again", async () => {
    const own = env.data.dashboards.find((d) => d.user_id === DEMO_USERS.camille && !d.is_shared)!;
    expect(own.share_token).toBeNull();
    const path = `/users/me/custom-dashboards/${own.id}/sharing`;
    const shared = await put(path, {
      visibility: "members",
      permissions: ["edit"],
      members: [DEMO_USERS.julien, DEMO_USERS.thomas],
    });
    expect(shared.status).toBe(200);
    expect(shared.body).toMatchObject({
      is_shared: true,
      sharing: {
        visibility: "members",
        permissions: ["view", "edit"],
        members: [DEMO_USERS.julien, DEMO_USERS.thomas],
      },
    });
    const token = shared.body.share_token;
    expect(token).toMatch(/^shr_/);
    const again = await put(path, { visibility: "entity" });
    expect(again.body).toMatchObject({ share_token: token, sharing: { members: [] } });
    const closed = await put(path, { visibility: "private" });
    expect(closed.body).toMatchObject({ is_shared: false, share_token: null });
    const reopened = await put(path, { visibility: "entity" });
    expect(reopened.body.share_token).toMatch(/^shr_/);
    expect(reopened.body.share_token).not.toBe(token);
  });

  it("names what is wrong with a sharing", async () => {
    const own = env.data.dashboards.find((d) => d.user_id === DEMO_USERS.camille)!;
    const path = `/users/me/custom-dashboards/${own.id}/sharing`;
    const cases: Array<[unknown, string[]]> = [
      [{ visibility: "members" }, ["members"]],
      [
        { visibility: "members", members: [DEMO_USERS.camille, "usr_nobody"] },
        ["members[0]", "members[1]"],
      ],
      [{ visibility: "private", members: [DEMO_USERS.julien] }, ["members"]],
      [{ visibility: "private", permissions: ["view"] }, ["permissions"]],
      [{ visibility: "public" }, ["visibility"]],
    ];
    for (const [body, fields] of cases) {
      const reply = await put(path, body);
      expect(reply.status, JSON.stringify(body)).toBe(422);
      expect(reply.body.errors.map((e: any) => e.field)).toEqual(fields);
    }
  });
});

describe("personal-data exports", () => {
  it("prepares an export, serves it once ready, then lets it expire", async () => {
    const first = await env.client.call("POST", "/users/me/rgpd/export");
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ status: "pending", data: null, size_bytes: null });
    // Asking again while it is being prepared answers the same job.
    const again = await env.client.call("POST", "/users/me/rgpd/export");
    expect(again.body.id).toBe(first.body.id);
    const path = `/users/me/rgpd/export/${first.body.id}`;
    expect((await env.client.get(path)).body.status).toBe("pending");

    await later(31);
    const ready = await env.client.get(path);
    expect(ready.body.status).toBe("ready");
    expect(ready.body.data.profile.id).toBe(DEMO_USERS.camille);
    expect(ready.body.data.saved_views.length).toBe(
      env.data.savedViews.filter((v) => v.user_id === DEMO_USERS.camille).length,
    );
    expect(ready.body.data.custom_dashboards.length).toBeGreaterThan(0);
    expect(findKey(ready.body.data, "share_token")).toBe(false);
    expect(ready.body.size_bytes).toBe(Buffer.byteLength(JSON.stringify(ready.body.data)));
    // Once ready, a new request starts a new export.
    const next = await env.client.call("POST", "/users/me/rgpd/export");
    expect(next.body.id).not.toBe(first.body.id);

    await later(31 + 7 * 86_400);
    const expired = await env.client.get(path);
    expect(expired.body).toMatchObject({ status: "expired", data: null, size_bytes: null });
  });

  it("is the requester's own: another user's export is missing", async () => {
    const julien = env.data.rgpdExports.find((e) => e.user_id === DEMO_USERS.julien)!;
    const reply = await env.client.get(`/users/me/rgpd/export/${julien.id}`);
    expect(reply.status).toBe(404);
    expect(reply.body.reason_code).toBe("rgpd_export_not_found");
    const seeded = env.data.rgpdExports.filter((e) => e.user_id === DEMO_USERS.camille);
    const statuses = await Promise.all(
      seeded.map(async (e) => (await env.client.get(`/users/me/rgpd/export/${e.id}`)).body.status),
    );
    expect(statuses).toEqual(["expired", "ready"]);
  });
});

describe("the inventory and the erasure", () => {
  it("counts what is held about the user, by category", async () => {
    const { body } = await env.client.get("/users/me/rgpd/inventory");
    const records = Object.fromEntries(body.categories.map((c: any) => [c.category, c.records]));
    expect(records).toMatchObject({
      identity: 1,
      saved_views: env.data.savedViews.filter((v) => v.user_id === DEMO_USERS.camille).length,
      custom_dashboards: env.data.dashboards.filter((d) => d.user_id === DEMO_USERS.camille).length,
      follow_up_notes: env.data.notes.filter((n) => n.user_id === DEMO_USERS.camille).length,
      rgpd_exports: 2,
    });
    expect(records.follow_up_notes).toBeGreaterThan(0);
    expect(body.erasure).toBeNull();
  });

  it("records an erasure once, carries it out on its date, and then acts for the user no more", async () => {
    const camille = user(DEMO_USERS.camille);
    const notes = env.data.notes.filter((n) => n.user_id === camille.id);
    const requested = await env.client.write("POST", "/users/me/rgpd/erasure", {
      reason: "Départ de l'entité",
    });
    expect(requested.status).toBe(202);
    const requestedMs = Date.parse(requested.body.requested_at);
    const effective = new Date(requestedMs + 30 * DAY_MS).toISOString().slice(0, 10);
    expect(requested.body).toMatchObject({
      user_id: camille.id,
      status: "scheduled",
      effective_on: effective,
      requested_by: "apikey:sandboxdemo",
      deleted: expect.arrayContaining(["saved_views", "custom_dashboards", "preferences"]),
      pseudonymised: expect.arrayContaining(["identity", "follow_up_notes"]),
    });
    const twice = await env.client.write("POST", "/users/me/rgpd/erasure", undefined);
    expect(twice.status).toBe(409);
    expect(twice.body.reason_code).toBe("erasure_already_requested");
    // Until its date, the user works as before; the inventory shows what is coming.
    const inventory = await env.client.get("/users/me/rgpd/inventory");
    expect(inventory.body.erasure).toMatchObject({ id: requested.body.id, status: "scheduled" });

    await later(31 * 86_400);
    const byId = await env.client.get("/users/me", { delegate: "id" });
    expect(byId.status).toBe(403);
    expect(byId.body.reason_code).toBe("delegated_user_not_approved");
    const byEmail = await env.client.get("/users/me");
    expect(byEmail.status).toBe(404);
    expect(byEmail.body.reason_code).toBe("delegated_user_not_found");

    const tombstone = (await env.client.get(`/users/${camille.id}`)).body;
    expect(tombstone).toMatchObject({
      display_name: "Utilisateur anonymisé",
      status: "suspended",
      job_title: "",
      erased_at: `${effective}T00:00:00.000Z`,
    });
    expect(tombstone.email).toMatch(/@anonymise\.invalid$/);
    expect(env.data.savedViews.some((v) => v.user_id === camille.id)).toBe(false);
    expect(env.data.dashboards.some((d) => d.user_id === camille.id)).toBe(false);
    expect(env.data.rgpdExports.some((e) => e.user_id === camille.id)).toBe(false);
    for (const note of notes) {
      expect(note.author_name).toBe("Utilisateur anonymisé");
      expect(env.data.notes).toContain(note);
    }
    expect(env.data.rgpdErasures[0]).toMatchObject({ status: "completed" });
    // Irreversible: the account cannot be brought back or changed.
    for (const reply of [
      await env.client.write("POST", `/users/${camille.id}/activate`, undefined),
      await env.client.write("PATCH", `/users/${camille.id}`, { first_name: "Camille" }),
    ]) {
      expect(reply.status).toBe(409);
      expect(reply.body.reason_code).toBe("user_erased");
    }
  });
});
