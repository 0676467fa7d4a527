import { describe, expect, it } from "vitest";
import { DEMO_USERS } from "../src/index.js";
import { asUser } from "./helpers/partner-client.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

const DAY_MS = 86_400_000;

// Each test starts from the seeded data: a state machine is about state.
const env = sandboxPerTest({ rateLimit: false });

const users = () => env.data.users;
const userById = (id: string) => {
  const user = users().find((u) => u.id === id);
  if (!user) throw new Error(`no user ${id}`);
  return user;
};
const move = (id: string, path: string, body?: unknown) =>
  env.client.write("POST", `/users/${id}/${path}`, body);
/** `/users/me` acting for a user, by id. */
const meAs = (id: string) => asUser(env.client, userById(id)).get("/users/me", { delegate: "id" });

describe("the entity's users", () => {
  it("lists the team by last name, in every state, without personal preferences", async () => {
    const { status, body } = await env.client.get("/users", { query: { limit: 200 } });
    expect(status).toBe(200);
    expect(body.total).toBe(12);
    const names = body.items.map((u: any) => u.last_name);
    expect(names).toEqual([...names].sort((a: string, b: string) => a.localeCompare(b, "fr")));
    expect(new Set(body.items.map((u: any) => u.status))).toEqual(
      new Set(["invited", "approved", "suspended"]),
    );
    for (const user of body.items) {
      expect(user).not.toHaveProperty("preferences");
      expect(user).not.toHaveProperty("alert_preferences");
    }
    const hugo = body.items.find((u: any) => u.id === "usr_hugo_girard");
    // An invitation that ran out: the account stays invited, and can be invited again.
    expect(Date.parse(hugo.invitation_expires_at)).toBeLessThan(Date.now());
    expect(hugo.activated_at).toBeNull();
  });

  it("filters by status and by part of a name or address, accents aside", async () => {
    const invited = await env.client.get("/users", { query: { status: "invited" } });
    expect(invited.body.items.map((u: any) => u.id).sort()).toEqual(
      [DEMO_USERS.lea, "usr_hugo_girard", "usr_manon_fournier"].sort(),
    );
    const found = await env.client.get("/users", { query: { search: "lefevre" } });
    expect(found.body.items.map((u: any) => u.display_name)).toEqual(["Nicolas Lefèvre"]);
    const page = await env.client.get("/users", { query: { limit: 5, offset: 10 } });
    expect(page.body).toMatchObject({ total: 12 });
    expect(page.body.items).toHaveLength(2);
    const bad = await env.client.get("/users", { query: { status: "pending" } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe("status");
  });

  it("gets one user by its string id, and 404 for a stranger", async () => {
    const camille = await env.client.get(`/users/${DEMO_USERS.camille}`);
    expect(camille.body).toMatchObject({
      id: DEMO_USERS.camille,
      email: "camille.martin@aurore-capital.example",
      status: "approved",
      invited_by: "usr_nicolas_lefevre",
    });
    const missing = await env.client.get("/users/usr_nobody");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ reason_code: "user_not_found", route_id: "user_get" });
  });
});

describe("invitations", () => {
  it("invites a user, who stays invited until someone activates the account", async () => {
    const reply = await env.client.write("POST", "/users", {
      email: "Margaux.Perrin@Aurore-Capital.example",
      first_name: "Margaux",
      last_name: "Perrin",
      job_title: "Analyste investissements",
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      id: "usr_margaux_perrin",
      email: "margaux.perrin@aurore-capital.example",
      status: "invited",
      invited_by: "apikey:sandboxdemo",
      activated_at: null,
      read_only: false,
      locale: "fr-FR",
    });
    const validFor =
      Date.parse(reply.body.invitation_expires_at) - Date.parse(reply.body.invited_at);
    expect(validFor).toBe(14 * DAY_MS);
    const same = await env.client.write("POST", "/users", {
      email: "margaux.perrin@aurore-capital.example",
      first_name: "Margaux",
      last_name: "Perrin",
    });
    expect(same.status).toBe(409);
    expect(same.body.reason_code).toBe("user_email_taken");
    // A namesake gets the next id.
    const namesake = await env.client.write("POST", "/users", {
      email: "margaux.perrin@cabinet-conseil.example",
      first_name: "Margaux",
      last_name: "Perrin",
    });
    expect(namesake.body.id).toBe("usr_margaux_perrin_2");
  });

  it("names the field and the rule when an invitation is malformed", async () => {
    const reply = await env.client.write("POST", "/users", {
      email: "not-an-address",
      first_name: "",
      last_name: "Perrin",
      timezone: "Europe/Lutece",
    });
    expect(reply.status).toBe(422);
    expect(reply.body.errors.map((e: any) => e.field).sort()).toEqual([
      "email",
      "first_name",
      "timezone",
    ]);
  });
});

describe("the account lifecycle", () => {
  it("activates an invited user, then serves the sandbox's calls made for them", async () => {
    expect((await meAs(DEMO_USERS.lea)).status).toBe(403);
    const reply = await move(DEMO_USERS.lea, "activate");
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ status: "approved", invitation_expires_at: null });
    expect(reply.body.activated_at).not.toBeNull();
    expect((await meAs(DEMO_USERS.lea)).status).toBe(200);
  });

  it("suspends an approved user, whose delegated calls are refused at once, then reactivates", async () => {
    expect((await meAs(DEMO_USERS.camille)).status).toBe(200);
    const suspended = await move(DEMO_USERS.camille, "suspend", { reason: "Audit de sécurité" });
    expect(suspended.status).toBe(200);
    expect(suspended.body).toMatchObject({
      status: "suspended",
      suspension_reason: "Audit de sécurité",
    });
    for (const path of ["/users/me", "/users/me/saved-views"]) {
      const refused = await env.client.get(path);
      expect(refused.status, path).toBe(403);
      expect(refused.body.reason_code).toBe("delegated_user_not_approved");
    }
    const write = await env.client.write("POST", "/users/me/custom-dashboards", { name: "Essai" });
    expect(write.body.reason_code).toBe("delegated_user_not_approved");
    const back = await move(DEMO_USERS.camille, "activate");
    expect(back.body).toMatchObject({ status: "approved", suspended_at: null });
    expect((await env.client.get("/users/me")).status).toBe(200);
  });

  it("sends a password reset to an approved user only", async () => {
    const reply = await move(DEMO_USERS.thomas, "password-reset");
    expect(reply.status).toBe(202);
    expect(reply.body).toMatchObject({
      user_id: DEMO_USERS.thomas,
      message: "password_reset",
      sent_to: "thomas.petit@aurore-capital.example",
    });
    expect(Date.parse(reply.body.expires_at) - Date.parse(reply.body.sent_at)).toBe(DAY_MS);
    expect(userById(DEMO_USERS.thomas).password_reset_requested_at).toBe(reply.body.sent_at);
    const invited = await move(DEMO_USERS.lea, "password-reset");
    expect(invited.status).toBe(409);
    expect(invited.body).toMatchObject({
      reason_code: "invalid_transition",
      route_id: "user_reset_password",
    });
  });

  it("sends an invitation again while the account is invited, expired ones included", async () => {
    const reply = await move("usr_hugo_girard", "invitation");
    expect(reply.status).toBe(202);
    expect(reply.body.message).toBe("invitation");
    expect(Date.parse(reply.body.expires_at) - Date.parse(reply.body.sent_at)).toBe(14 * DAY_MS);
    expect(userById("usr_hugo_girard").invitation_expires_at).toBe(reply.body.expires_at);
    const approved = await move(DEMO_USERS.camille, "invitation");
    expect(approved.status).toBe(409);
    expect(approved.body.reason_code).toBe("invalid_transition");
  });

  it("allows the moves of the table and refuses the others with 409 invalid_transition", async () => {
    const table: Array<[from: string, user: string, path: string, to: string | null]> = [
      ["invited", DEMO_USERS.lea, "activate", "approved"],
      ["suspended", DEMO_USERS.sophie, "activate", "approved"],
      ["approved", DEMO_USERS.thomas, "suspend", "suspended"],
      ["invited", "usr_manon_fournier", "suspend", null],
      ["suspended", "usr_ines_mercier", "suspend", null],
      ["approved", "usr_claire_garnier", "activate", null],
      ["suspended", "usr_ines_mercier", "password-reset", null],
      ["suspended", "usr_ines_mercier", "invitation", null],
    ];
    for (const [from, id, path, to] of table) {
      expect(userById(id).status, id).toBe(from);
      const reply = await move(id, path);
      if (to === null) {
        expect(reply.status, `${from} ${path}`).toBe(409);
        expect(reply.body.reason_code).toBe("invalid_transition");
        expect(reply.body.detail).toContain(from);
        expect(userById(id).status).toBe(from);
      } else {
        expect(reply.status, `${from} ${path}`).toBe(200);
        expect(reply.body.status).toBe(to);
      }
    }
  });
});

describe("changes to a user", () => {
  it("changes what is sent, keeps the rest, and refuses the status or nothing", async () => {
    const before = userById(DEMO_USERS.julien);
    const reply = await env.client.write("PATCH", `/users/${DEMO_USERS.julien}`, {
      last_name: "Bernard-Morel",
      read_only: false,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      display_name: "Julien Bernard-Morel",
      read_only: false,
      job_title: before.job_title,
      email: before.email,
    });
    const status = await env.client.write("PATCH", `/users/${DEMO_USERS.julien}`, {
      status: "suspended",
    });
    expect(status.status).toBe(422);
    expect(status.body.errors[0].field).toBe("status");
    const empty = await env.client.write("PATCH", `/users/${DEMO_USERS.julien}`, {});
    expect(empty.status).toBe(422);
    expect(empty.body.errors[0]).toMatchObject({ field: "body", rule: "min 1 field" });
  });
});
