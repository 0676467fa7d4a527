import { beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../src/index.js";
import { asUser, PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

let operationId: string;

const notesOf = (s: Sandbox, id: string) =>
  s.control.state.data.notes.filter((n) => n.operation_id === id);

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox();
beforeAll(() => {
  operationId = env.data.operations[40]!.id;
});

describe("Idempotency-Key on writes (spec part 4)", () => {
  it.each([
    ["missing", undefined, "required"],
    ["empty", "", "required"],
    ["too long", "k".repeat(256), "max length 255"],
    ["with a space", "two words", "pattern ^[!-~]+$"],
    ["non-ASCII", "clé-é", "pattern ^[!-~]+$"],
  ])("refuses a %s key with 422 and applies nothing", async (_case, key, rule) => {
    const before = notesOf(env.sandbox, operationId).length;
    const reply = await env.client.call("POST", `/operations/${operationId}/notes`, {
      body: { content: "refused" },
      ...(key === undefined ? {} : { idempotencyKey: key }),
    });
    expect(reply.status).toBe(422);
    expect(reply.body.errors[0]).toMatchObject({ field: "header Idempotency-Key", rule });
    expect(notesOf(env.sandbox, operationId)).toHaveLength(before);
  });

  it("accepts a 255-character key", async () => {
    const reply = await env.client.write(
      "POST",
      `/operations/${operationId}/notes`,
      { content: "long key" },
      {
        idempotencyKey: "k".repeat(255),
      },
    );
    expect(reply.status).toBe(201);
  });

  it("replays the stored response for the same key and content, and applies once", async () => {
    const before = notesOf(env.sandbox, operationId).length;
    const body = { content: "Point d'étape avec l'opérateur", note_type: "call" };
    const first = await env.client.write("POST", `/operations/${operationId}/notes`, body, {
      idempotencyKey: "note-replay-1",
    });
    const second = await env.client.write("POST", `/operations/${operationId}/notes`, body, {
      idempotencyKey: "note-replay-1",
    });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(first.headers.get("idempotent-replayed")).toBe("false");
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(notesOf(env.sandbox, operationId)).toHaveLength(before + 1);
  });

  it("replays a stored refusal too: a 404 write stays a 404", async () => {
    const missing = "00000000-0000-4000-8000-000000000001";
    const first = await env.client.write(
      "POST",
      `/operations/${missing}/notes`,
      { content: "x" },
      { idempotencyKey: "note-404" },
    );
    const again = await env.client.write(
      "POST",
      `/operations/${missing}/notes`,
      { content: "x" },
      { idempotencyKey: "note-404" },
    );
    expect(first.status).toBe(404);
    expect(again.status).toBe(404);
    expect(again.body).toEqual(first.body);
  });

  it("refuses the same key with different content with 409 idempotency_key_reused", async () => {
    await env.client.write(
      "POST",
      `/operations/${operationId}/notes`,
      { content: "A" },
      { idempotencyKey: "note-conflict" },
    );
    const conflict = await env.client.write(
      "POST",
      `/operations/${operationId}/notes`,
      { content: "B" },
      {
        idempotencyKey: "note-conflict",
      },
    );
    expect(conflict.status).toBe(409);
    expect(conflict.body.reason_code).toBe("idempotency_key_reused");
    const otherRoute = await env.client.write(
      "POST",
      "/users/me/custom-dashboards",
      { name: "A" },
      {
        idempotencyKey: "note-conflict",
      },
    );
    expect(otherRoute.status).toBe(409);
  });

  it("treats the delegated user as part of the content", async () => {
    const users = env.data.users;
    const camille = asUser(env.client, users.find((u) => u.id === "usr_camille_martin")!);
    const thomas = asUser(env.client, users.find((u) => u.id === "usr_thomas_petit")!);
    const body = { name: "Tableau du lundi" };
    expect(
      (
        await camille.write("POST", "/users/me/custom-dashboards", body, {
          idempotencyKey: "dash-user",
        })
      ).status,
    ).toBe(201);
    // The same user named by id instead of email: the same content, so a replay.
    const byId = await camille.write("POST", "/users/me/custom-dashboards", body, {
      idempotencyKey: "dash-user",
      delegate: "id",
    });
    expect(byId.headers.get("idempotent-replayed")).toBe("true");
    env.sandbox.control.updateKey("sandboxdemo", {
      delegatedUsers: ["usr_camille_martin", "usr_thomas_petit"],
    });
    try {
      const otherUser = await thomas.write("POST", "/users/me/custom-dashboards", body, {
        idempotencyKey: "dash-user",
      });
      expect(otherUser.status).toBe(409);
      expect(otherUser.body.reason_code).toBe("idempotency_key_reused");
    } finally {
      env.sandbox.control.updateKey("sandboxdemo", {
        delegatedUsers: [
          "usr_camille_martin",
          "usr_julien_bernard",
          "usr_sophie_leroy",
          "usr_lea_moreau",
        ],
      });
    }
  });

  it("keeps keys per API key: another key may use the same value", async () => {
    const other = new PartnerTestClient(env.sandbox.baseUrl, {
      keyId: "sandboxdemo",
      secret: env.sandbox.credentials.secret,
    });
    // Same API key, new bearer: the record is found (keys are per API key, not per bearer).
    const a = await env.client.write(
      "POST",
      `/operations/${operationId}/notes`,
      { content: "per key" },
      { idempotencyKey: "shared-value" },
    );
    const b = await other.write(
      "POST",
      `/operations/${operationId}/notes`,
      { content: "per key" },
      { idempotencyKey: "shared-value" },
    );
    expect(b.body.id).toBe(a.body.id);
  });

  it("does not store 5xx outcomes: after an injected 503 the same key applies the write", async () => {
    const before = notesOf(env.sandbox, operationId).length;
    env.sandbox.control.failNext(1, 503, { match: { routeId: "operation_note_create" } });
    const failed = await env.client.write(
      "POST",
      `/operations/${operationId}/notes`,
      { content: "after 503" },
      { idempotencyKey: "after-503" },
    );
    expect(failed.status).toBe(503);
    expect(notesOf(env.sandbox, operationId)).toHaveLength(before);
    const retried = await env.client.write(
      "POST",
      `/operations/${operationId}/notes`,
      { content: "after 503" },
      { idempotencyKey: "after-503" },
    );
    expect(retried.status).toBe(201);
    expect(notesOf(env.sandbox, operationId)).toHaveLength(before + 1);
  });

  it("applies a write whose connection dropped, and replays it on the retry with the same key", async () => {
    const before = notesOf(env.sandbox, operationId).length;
    env.sandbox.control.dropAfterApply(1, { routeId: "operation_note_create" });
    await expect(
      env.client.write(
        "POST",
        `/operations/${operationId}/notes`,
        { content: "uncertain" },
        { idempotencyKey: "dropped-1" },
      ),
    ).rejects.toThrow();
    expect(notesOf(env.sandbox, operationId)).toHaveLength(before + 1);
    const retry = await env.client.write(
      "POST",
      `/operations/${operationId}/notes`,
      { content: "uncertain" },
      { idempotencyKey: "dropped-1" },
    );
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(notesOf(env.sandbox, operationId)).toHaveLength(before + 1);
    expect(retry.body.id).toBe(notesOf(env.sandbox, operationId).at(-1)!.id);
  });
});

describe("with replay deduplication disabled", () => {
  it("still requires the key but applies every request", async () => {
    const plain = await startSandbox({ idempotencyReplay: false });
    try {
      const c = PartnerTestClient.for(plain);
      const id = plain.control.state.data.operations[0]!.id;
      const before = notesOf(plain, id).length;
      const missing = await c.call("POST", `/operations/${id}/notes`, { body: { content: "x" } });
      expect(missing.status).toBe(422);
      await c.write(
        "POST",
        `/operations/${id}/notes`,
        { content: "x" },
        { idempotencyKey: "same" },
      );
      await c.write(
        "POST",
        `/operations/${id}/notes`,
        { content: "x" },
        { idempotencyKey: "same" },
      );
      expect(notesOf(plain, id)).toHaveLength(before + 2);
    } finally {
      await plain.close();
    }
  });
});
