import { describe, expect, it } from "vitest";
import { DEMO_USERS } from "../src/index.js";
import { sandboxPerTest } from "./helpers/sandbox-per-test.js";

// Each test starts from the seeded data: no test sees another one's writes.
const env = sandboxPerTest({ rateLimit: false });

const notes = () => env.data.notes;
const pathOf = (n: { operation_id: string; id: string }) =>
  `/operations/${n.operation_id}/notes/${n.id}`;
const versioned = () => notes().find((n) => n.source_updated_at !== null && !n.is_resolved)!;
const plain = () => notes().find((n) => n.source_updated_at === null && !n.is_resolved)!;
const shifted = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

describe("changing a follow-up note", () => {
  it("leaves absent fields alone, normalises locales and clears what may be cleared", async () => {
    const note = plain();
    const reply = await env.client.write("PATCH", pathOf(note), {
      category: "risque",
      description_i18n: { fr_FR: "Dépassement du budget", EN: "Budget overrun" },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      category: "risque",
      content: note.content,
      description_i18n: { "fr-fr": "Dépassement du budget", en: "Budget overrun" },
    });
    const twice = await env.client.write("PATCH", pathOf(note), {
      description_i18n: { fr: "a", FR: "b" },
    });
    expect(twice.status).toBe(422);
    const cleared = await env.client.write("PATCH", pathOf(note), { description_i18n: null });
    expect(cleared.body.description_i18n).toBeNull();
    const required = await env.client.write("PATCH", pathOf(note), { content: null });
    expect(required.status).toBe(422);
  });

  it("versions a note the first time it gets a source_updated_at", async () => {
    const note = plain();
    const at = "2026-03-02T10:00:00+01:00";
    const reply = await env.client.write("PATCH", pathOf(note), { source_updated_at: at });
    expect(reply.status).toBe(200);
    expect(reply.body.source_updated_at).toBe(at);
  });

  it("on a versioned note, takes only a strictly more recent source_updated_at (spec part 2)", async () => {
    const note = versioned();
    const stored = note.source_updated_at!;
    const older = await env.client.write("PATCH", pathOf(note), {
      text: "Texte importé plus ancien",
      source_updated_at: shifted(stored, -60_000),
    });
    expect(older.status).toBe(409);
    expect(older.body).toMatchObject({
      reason_code: "source_update_not_newer",
      route_id: "operation_note_update",
    });
    expect(note.text).not.toBe("Texte importé plus ancien");
    const removed = await env.client.write("PATCH", pathOf(note), { source_updated_at: null });
    expect(removed.status).toBe(409);
    // The same instant, written in another zone, is no change: accepted, the stored value kept.
    const sameInstant = new Date(Date.parse(stored)).toISOString().replace("Z", "+00:00");
    const same = await env.client.write("PATCH", pathOf(note), {
      category: "reporting",
      source_updated_at: sameInstant,
    });
    expect(same.status).toBe(200);
    expect(same.body.source_updated_at).toBe(stored);
    const newer = shifted(stored, 1);
    const accepted = await env.client.write("PATCH", pathOf(note), {
      text: "Texte importé à jour",
      source_updated_at: newer,
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ text: "Texte importé à jour", source_updated_at: newer });
    // Local edits that do not touch the source version are not refused.
    const local = await env.client.write("PATCH", pathOf(note), { category: "suivi" });
    expect(local.status).toBe(200);
  });
});

describe("resolving a follow-up note", () => {
  it("resolves an open note, refuses to resolve it twice, reopens it, refuses to reopen it twice", async () => {
    const note = plain();
    const resolved = await env.client.write("POST", `${pathOf(note)}/resolve`, undefined);
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ is_resolved: true, resolved_by: "apikey:sandboxdemo" });
    expect(Date.parse(resolved.body.resolved_at)).toBeGreaterThan(Date.now() - 60_000);
    const again = await env.client.write("POST", `${pathOf(note)}/resolve`, {});
    expect(again.status).toBe(409);
    expect(again.body.reason_code).toBe("invalid_transition");
    const reopened = await env.client.write("POST", `${pathOf(note)}/resolve`, {
      is_resolved: false,
    });
    expect(reopened.body).toMatchObject({
      is_resolved: false,
      resolved_by: null,
      resolved_at: null,
    });
    const reopenedTwice = await env.client.write("POST", `${pathOf(note)}/resolve`, {
      is_resolved: false,
    });
    expect(reopenedTwice.status).toBe(409);
  });

  it("records who resolved it and when, if a user of the entity and not in the future", async () => {
    const note = plain();
    const when = shifted(note.created_at, 3_600_000);
    const reply = await env.client.write("POST", `${pathOf(note)}/resolve`, {
      resolved_by: DEMO_USERS.thomas,
      resolved_at: when,
    });
    expect(reply.body).toMatchObject({ resolved_by: DEMO_USERS.thomas, resolved_at: when });
    const other = notes().find((n) => !n.is_resolved && n.id !== note.id)!;
    const stranger = await env.client.write("POST", `${pathOf(other)}/resolve`, {
      resolved_by: "usr_nobody",
    });
    expect(stranger.body).toMatchObject({ reason_code: "reference_not_found" });
    const future = await env.client.write("POST", `${pathOf(other)}/resolve`, {
      resolved_at: shifted(new Date().toISOString(), 86_400_000),
    });
    expect(future.status).toBe(422);
    expect(future.body.errors[0].field).toBe("resolved_at");
    expect(other.is_resolved).toBe(false);
  });
});
