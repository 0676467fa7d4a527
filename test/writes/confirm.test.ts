import { createHash } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { DEMO_KEYS, type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { INVENTORY } from "../../src/inventory/index.js";
import { connectInMemory, type InMemoryOptions } from "../helpers/mcp.js";

let sandbox: Sandbox;
const sessions: Array<{ close(): Promise<void> }> = [];
const open = async (options: InMemoryOptions = {}) => {
  const session = await connectInMemory(sandbox, { writes: {}, ...options });
  sessions.push(session);
  return session;
};
type Session = Awaited<ReturnType<typeof open>>;
const call = async (s: Session, name: string, args: Record<string, unknown>) =>
  (await s.client.callTool({ name, arguments: args })) as {
    structuredContent?: any;
    content: any[];
    isError?: boolean;
  };
const notesOf = (id: string) =>
  sandbox.control.state.data.notes.filter((n) => n.operation_id === id);
const writesSince = (mark: number) =>
  sandbox.control
    .requests({ since: mark })
    .filter(
      (e) =>
        e.method !== "GET" &&
        e.routeId !== "auth_token" &&
        e.routeId !== "workflow_recommendations_preview",
    );

let operation: { id: string; name: string };
/** {"a":{"a":{…}}}, `levels` deep. */
const deep = (levels: number) => {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  operation = sandbox.control.state.data.operations[20]!;
});
afterEach(async () => {
  sandbox.control.clearFaults();
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
afterAll(() => sandbox.close());

describe("two-step confirmation (a client without elicitation)", () => {
  it("drafts, shows a faithful preview, sends nothing, then confirm_write delivers once", async () => {
    const s = await open();
    const mark = sandbox.control.mark();
    const draft = await call(s, "create_operation_note", {
      operation_id: operation.id,
      content: "Comité du 20 : feu vert pour la phase 2.",
      note_type: "comite",
    });
    expect(draft.isError).toBeFalsy();
    const out = draft.structuredContent;
    expect(out).toMatchObject({
      status: "awaiting_confirmation",
      preview: {
        action: "Create a follow-up note",
        target: `operation «${operation.name}» (${operation.id})`,
        // Spec part 5: only /users/me* act as the delegated user; a note is the key's own.
        recorded_as: "the API key sandboxdemo (the integration's service account, not a person)",
        fields: { content: "Comité du 20 : feu vert pour la phase 2.", note_type: "comite" },
        billable: false,
      },
    });
    // The id names the write, so a client's "allow confirm_write?" shows the write itself, in
    // words no upstream text writes: the operation, its target, a digest of the body.
    const digest = createHash("sha256")
      .update(
        JSON.stringify({
          content: "Comité du 20 : feu vert pour la phase 2.",
          note_type: "comite",
        }),
      )
      .digest("hex")
      .slice(0, 12);
    expect(out.confirmation_id).toMatch(
      new RegExp(
        `^operation_note_create operation_id=${operation.id} · body sha256:${digest} \\[cf_[A-Za-z0-9_-]{16}\\]$`,
      ),
    );
    expect(out.message).toContain("only once they have agreed");
    expect(Date.parse(out.expires_at) - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(writesSince(mark)).toHaveLength(0);

    const before = notesOf(operation.id).length;
    const confirmed = await call(s, "confirm_write", { confirmation_id: out.confirmation_id });
    expect(confirmed.structuredContent).toMatchObject({
      status: "succeeded",
      result: { content: "Comité du 20 : feu vert pour la phase 2." },
    });
    expect(notesOf(operation.id)).toHaveLength(before + 1);
    const listed = await call(s, "list_operation_notes", { operation_id: operation.id });
    expect(listed.structuredContent.items.map((n: { id: string }) => n.id)).toContain(
      confirmed.structuredContent.result.id,
    );

    const mark2 = sandbox.control.mark();
    const again = await call(s, "confirm_write", { confirmation_id: out.confirmation_id });
    expect(again.structuredContent.result.id).toBe(confirmed.structuredContent.result.id);
    expect(writesSince(mark2)).toHaveLength(0);
    expect(notesOf(operation.id)).toHaveLength(before + 1);
  });

  it("delivers once when two confirmations race", async () => {
    const s = await open();
    const draft = await call(s, "create_custom_dashboard", { name: "Course" });
    const id = draft.structuredContent.confirmation_id;
    const mark = sandbox.control.mark();
    sandbox.control.delay(200, { count: 1, match: { routeId: "custom_dashboard_create" } });
    const [a, b] = await Promise.all([
      call(s, "confirm_write", { confirmation_id: id }),
      call(s, "confirm_write", { confirmation_id: id }),
    ]);
    expect(a.structuredContent.result.id).toBe(b.structuredContent.result.id);
    expect(writesSince(mark)).toHaveLength(1);
    expect(sandbox.control.state.data.dashboards.filter((d) => d.name === "Course")).toHaveLength(
      1,
    );
  });

  it("recovers a write applied before the connection dropped: automatic retry, same key, one record", async () => {
    const s = await open({ settings: { maxRetries: 2 } });
    const draft = await call(s, "create_operation_note", {
      operation_id: operation.id,
      text: "Après coupure",
    });
    const before = notesOf(operation.id).length;
    sandbox.control.dropAfterApply(1, { routeId: "operation_note_create" });
    const mark = sandbox.control.mark();
    const done = await call(s, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(done.structuredContent.status).toBe("succeeded");
    const sent = writesSince(mark);
    expect(sent.map((e) => e.status)).toEqual([null, 201]);
    expect(new Set(sent.map((e) => e.headers["idempotency-key"])).size).toBe(1);
    expect(notesOf(operation.id)).toHaveLength(before + 1);
  });

  it("leaves a write uncertain when the API does not answer, and finishes it on the next confirm_write", async () => {
    const s = await open({ settings: { maxRetries: 0 } });
    const draft = await call(s, "create_operation_note", {
      operation_id: operation.id,
      text: "Incertaine",
    });
    const id = draft.structuredContent.confirmation_id;
    const before = notesOf(operation.id).length;
    sandbox.control.dropAfterApply(1, { routeId: "operation_note_create" });
    const first = await call(s, "confirm_write", { confirmation_id: id });
    expect(first.structuredContent.status).toBe("uncertain");
    expect(first.structuredContent.message).toContain("same Idempotency-Key");
    expect(s.gate!.get(id)?.state).toBe("uncertain");
    sandbox.control.failNext(1, 500, { match: { routeId: "operation_note_create" } });
    expect((await call(s, "confirm_write", { confirmation_id: id })).structuredContent.status).toBe(
      "uncertain",
    );
    const second = await call(s, "confirm_write", { confirmation_id: id });
    expect(second.structuredContent.status).toBe("succeeded");
    expect(notesOf(operation.id)).toHaveLength(before + 1);
    const keys = sandbox.control
      .requests({ routeId: "operation_note_create" })
      .filter((e) => e.body && (e.body as { text?: string }).text === "Incertaine")
      .map((e) => e.headers["idempotency-key"]);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  it("keeps a write whose bearer was refused even after a renewal, and finishes it next time", async () => {
    const s = await open();
    const draft = await call(s, "create_custom_dashboard", { name: "Après deux 401" });
    sandbox.control.failNext(2, 401, { match: { routeId: "custom_dashboard_create" } });
    const first = await call(s, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(first.structuredContent.status).toBe("uncertain");
    const second = await call(s, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(second.structuredContent.status).toBe("succeeded");
    expect(
      sandbox.control.state.data.dashboards.filter((d) => d.name === "Après deux 401"),
    ).toHaveLength(1);
  });

  it("records a definitive refusal as failed, with the API's reason, and never resends it", async () => {
    const s = await open();
    const draft = await call(s, "create_custom_dashboard", { name: "Clé modifiée" });
    const id = draft.structuredContent.confirmation_id;
    // The administrator takes users:write away between the draft and the confirmation.
    const key = sandbox.credentials.keyId;
    const scopes = [...DEMO_KEYS.full.scopes];
    sandbox.control.updateKey(key, { scopes: scopes.filter((x) => x !== "users:write") });
    try {
      const failed = await call(s, "confirm_write", { confirmation_id: id });
      expect(failed.isError).toBe(true);
      expect(failed.content[0].text).toMatch(
        /^The Partner API refused the write: this API key lacks the scope users:write, which an administrator can grant \(request pmcp-[^)]+\)\. Nothing was written\.$/,
      );
      const mark = sandbox.control.mark();
      expect((await call(s, "confirm_write", { confirmation_id: id })).isError).toBe(true);
      expect(writesSince(mark)).toHaveLength(0);
    } finally {
      sandbox.control.updateKey(key, { scopes });
    }
  });

  it("cancels a draft: nothing sent, and it cannot be confirmed afterwards", async () => {
    const s = await open();
    const draft = await call(s, "create_custom_dashboard", { name: "Annulé" });
    const id = draft.structuredContent.confirmation_id;
    const mark = sandbox.control.mark();
    expect(
      (await call(s, "cancel_write", { confirmation_id: id })).structuredContent,
    ).toMatchObject({ status: "cancelled", message: "Nothing was written." });
    const refused = await call(s, "confirm_write", { confirmation_id: id });
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toContain("was cancelled; nothing was sent");
    expect(writesSince(mark)).toHaveLength(0);
  });

  it("refuses unknown, expired and foreign confirmation ids, sending nothing", async () => {
    const s = await open({ writes: { ttlSeconds: 30 } });
    const mark = sandbox.control.mark();
    const unknown = await call(s, "confirm_write", { confirmation_id: "cf_doesnotexist0000" });
    expect(unknown.content[0].text).toBe(
      "No drafted write has the confirmation id cf_doesnotexist0000 (drafts are removed once they expire); this call sent nothing. Draft the write again if it is still wanted.",
    );
    const malformed = await call(s, "confirm_write", { confirmation_id: "../../etc/passwd" });
    expect(malformed.content[0].text).toContain("No drafted write has the confirmation id");

    const draft = await call(s, "create_custom_dashboard", { name: "Expire" });
    const id = draft.structuredContent.confirmation_id;
    const intent = s.gate!.get(id)!;
    // Age the draft past its expiry, as the clock would.
    Object.assign(intent, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    const expired = await call(s, "confirm_write", { confirmation_id: id });
    expect(expired.content[0].text).toContain("expired");

    const other = await open({
      writes: { gate: s.gate },
      sessionId: "another-session",
      client: "http:another-client",
    });
    const draft2 = await call(s, "create_custom_dashboard", { name: "À moi" });
    const foreign = await call(other, "confirm_write", {
      confirmation_id: draft2.structuredContent.confirmation_id,
    });
    expect(foreign.isError).toBe(true);
    expect(foreign.content[0].text).toMatch(
      /^The write cf_\S+ was drafted by another client or for another user, who alone can confirm or cancel it; this call sent nothing\.$/,
    );
    const cancelForeign = await call(other, "cancel_write", {
      confirmation_id: draft2.structuredContent.confirmation_id,
    });
    expect(cancelForeign.isError).toBe(true);
    expect(writesSince(mark)).toHaveLength(0);
  });

  it("refuses a confirmation for another delegated user, even in the same session", async () => {
    const s = await open();
    const draft = await call(s, "create_custom_dashboard", { name: "Camille" });
    const juliens = await open({
      writes: { gate: s.gate },
      settings: { delegatedUser: { email: "julien.bernard@aurore-capital.example" } },
    });
    const refused = await call(juliens, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(refused.content[0].text).toContain("drafted by another client or for another user");
  });

  it("lets another session of the same client and user confirm: the write is theirs", async () => {
    const s = await open();
    const draft = await call(s, "create_custom_dashboard", { name: "Deux onglets" });
    const sameClient = await open({ writes: { gate: s.gate }, sessionId: "second-tab" });
    const done = await call(sameClient, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(done.structuredContent.status).toBe("succeeded");
  });

  it("accepts only the confirmation id exactly as drafted, sending nothing otherwise", async () => {
    const s = await open();
    const draft = await call(s, "create_operation_note", {
      operation_id: operation.id,
      content: "Texte montré à l'humain",
    });
    const id: string = draft.structuredContent.confirmation_id;
    const bare = /\[(cf_[^\]]+)\]$/.exec(id)![1]!;
    const mark = sandbox.control.mark();
    for (const wrong of [
      bare,
      id.replace(/sha256:[0-9a-f]{12}/, "sha256:000000000000"),
      `Create a follow-up note: anything [${bare}]`,
    ]) {
      const refused = await call(s, "confirm_write", { confirmation_id: wrong });
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toBe(
        "confirmation_id must be passed exactly as the draft returned it, the write spelled out and the id in brackets; this call sent nothing.",
      );
    }
    expect(writesSince(mark)).toHaveLength(0);
    expect((await call(s, "confirm_write", { confirmation_id: id })).structuredContent.status).toBe(
      "succeeded",
    );
  });

  it("keeps the journal owner-only and durable", async () => {
    const s = await open();
    const draft = await call(s, "create_custom_dashboard", { name: "Journal" });
    const dir = join(s.stateDir!, "intents");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dir);
    expect(files).toContain(`${s.gate!.get(draft.structuredContent.confirmation_id)!.id}.json`);
    for (const f of files) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
  });
});

describe("what each write tool sends", () => {
  it("creates a dashboard and never shows its share_token", async () => {
    const s = await open();
    // null for an optional input means absent; layout is JSON text, its object accepted too.
    const draft = await call(s, "create_custom_dashboard", {
      name: "Partagé",
      description: null,
      layout: '[{"widget":"kpi"}]',
      filters: { statut: "travaux" },
    });
    expect(draft.structuredContent.preview.fields).toEqual({
      name: "Partagé",
      layout: [{ widget: "kpi" }],
      filters: { statut: "travaux" },
    });
    const done = await call(s, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(done.structuredContent.result).toMatchObject({ name: "Partagé", is_shared: false });
    expect(JSON.stringify(done)).not.toContain("share_token");
    expect(JSON.stringify(done)).not.toContain("shr_");
    const created = sandbox.control.state.data.dashboards.find(
      (d) => d.id === done.structuredContent.result.id,
    )!;
    expect(created.share_token).toMatch(/^shr_/); // the API did send one
    expect(JSON.stringify(s.gate!.get(draft.structuredContent.confirmation_id))).not.toContain(
      created.share_token!,
    );
  });

  it("updates a saved view by name, only the fields given", async () => {
    const s = await open();
    const view = sandbox.control.state.data.savedViews.find(
      (v) => v.user_id === "usr_camille_martin",
    )!;
    // "none" clears the icon (the API's null); a null argument means the field was not given.
    const draft = await call(s, "update_saved_view", {
      view_id: view.id,
      color: "red",
      icon: "none",
      name: null,
    });
    expect(draft.structuredContent.preview).toMatchObject({
      action: "Update a saved view",
      target: `view «${view.name}» (${view.id})`,
    });
    expect(draft.structuredContent.preview.fields).toEqual({ color: "red", icon: null });
    await call(s, "confirm_write", { confirmation_id: draft.structuredContent.confirmation_id });
    expect(view).toMatchObject({ color: "red", icon: null });
    const missing = await call(s, "update_saved_view", {
      view_id: "00000000-0000-4000-8000-000000000000",
      name: "x",
    });
    expect(missing.content[0].text).toContain("no saved view");
  });

  it("creates a saved view and a workflow from a recommendation", async () => {
    const s = await open();
    const view = await call(s, "create_saved_view", {
      name: "  Travaux  ",
      type: "operations",
      filters: { statut: ["travaux"] },
    });
    expect(view.structuredContent.preview.target).toBe("operations view «Travaux»");
    expect(
      (await call(s, "confirm_write", { confirmation_id: view.structuredContent.confirmation_id }))
        .structuredContent.result.name,
    ).toBe("Travaux");
    const rec = sandbox.control.state.data.recommendations.find((r) => r.status === "validated")!;
    const wf = await call(s, "create_workflow_from_recommendation", {
      recommendation_id: rec.id,
      enabled: false,
    });
    expect(wf.structuredContent.preview.target).toBe(
      `from recommendation «${rec.title}» (${rec.id})`,
    );
    const made = await call(s, "confirm_write", {
      confirmation_id: wf.structuredContent.confirmation_id,
    });
    expect(made.structuredContent.result).toMatchObject({
      preset_key: rec.preset_key,
      enabled: false,
    });
  });

  it("says SIREN resolution is billable, refuses a bad checksum unbilled, and bills once", async () => {
    const s = await open();
    const billed = sandbox.control.stats().billableResolutions;
    const bad = await call(s, "resolve_siren", { siren: "732829321" });
    expect(bad.content[0].text).toContain("Luhn");
    const draft = await call(s, "resolve_siren", { siren: "732829320" });
    expect(draft.structuredContent.preview.billable).toBe(true);
    const tools = await s.client.listTools();
    expect(tools.tools.find((t) => t.name === "resolve_siren")!.description).toContain("BILLABLE");
    await call(s, "confirm_write", { confirmation_id: draft.structuredContent.confirmation_id });
    await call(s, "confirm_write", { confirmation_id: draft.structuredContent.confirmation_id });
    expect(sandbox.control.stats().billableResolutions).toBe(billed + 1);
  });
});

describe("input limits are checked before anything is sent", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["create_operation_note", { operation_id: "x", content: "ok" }, "operation_id"],
    ["create_operation_note", { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031" }, "content"],
    [
      "create_operation_note",
      { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031", content: "" },
      "content must not be empty",
    ],
    [
      "create_operation_note",
      { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031", content: "c".repeat(10_001) },
      "content must have at most 10000 characters",
    ],
    [
      "create_operation_note",
      { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031", text: "t".repeat(10_001) },
      "text",
    ],
    [
      "create_operation_note",
      { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031", content: "ok", note_type: "memo" },
      "note_type",
    ],
    [
      "create_operation_note",
      {
        operation_id: "5ced923a-d6bb-4559-8481-29af260cd031",
        content: "ok",
        category: "c".repeat(81),
      },
      "category must have at most 80 characters",
    ],
    [
      "create_operation_note",
      { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031", content: "ok", date: "yesterday" },
      "date",
    ],
    [
      "create_operation_note",
      { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031", content: "ok", confirm: true },
      "confirm is not a known field",
    ],
    ["create_custom_dashboard", { name: "" }, "name must not be empty"],
    ["create_custom_dashboard", { name: "n".repeat(201) }, "name must have at most 200 characters"],
    [
      "create_custom_dashboard",
      { name: "ok", description: "d".repeat(2001) },
      "description must have at most 2000 characters",
    ],
    [
      "create_custom_dashboard",
      { name: "ok", filters: { big: "x".repeat(16_400) } },
      "filters must take at most 16384 bytes of JSON",
    ],

    [
      "create_custom_dashboard",
      { name: "ok", layout: Array.from({ length: 51 }, () => ({})) },
      "layout must have at most 50 items",
    ],
    [
      "create_saved_view",
      { name: "v", type: "operations", filters: { status: "x" } },
      "use statut",
    ],
    [
      "create_saved_view",
      {
        name: "v",
        type: "operations",
        filters: Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, 1])),
      },
      "at most 24 keys",
    ],
    [
      "create_saved_view",
      { name: "v", type: "deals", filters: { big: "x".repeat(16_400) } },
      "16384 bytes",
    ],
    [
      "create_saved_view",
      { name: "v", type: "deals", columns: Array.from({ length: 65 }, () => "name") },
      "columns must have at most 64 items",
    ],
    [
      "create_saved_view",
      {
        name: "v",
        type: "deals",
        sort: Array.from({ length: 5 }, () => ({ sort_by: "name", sort_order: "asc" })),
      },
      "sort must have at most 4 items",
    ],
    [
      "create_saved_view",
      { name: "v", type: "deals", sort: [{ sort_by: "name", sort_order: "up" }] },
      "sort_order",
    ],
    ["create_saved_view", { name: "   ", type: "deals" }, "must not be blank"],
    ["create_saved_view", { name: "v", type: "tasks" }, "type must be one of operations"],
    ["create_saved_view", { name: "v", type: "deals", icon: "rocket" }, "icon must be one of star"],
    ["create_saved_view", { name: "v", type: "deals", color: "beige" }, "color must be one of"],
    [
      "create_saved_view",
      { name: "v", type: "operations", columns: ["name", "password"] },
      "columns[1] must be a column of operations views (name, statut, phase, statut_interne,",
    ],
    [
      "create_saved_view",
      { name: "v", type: "deals", sort: [{ sort_by: "ville", sort_order: "asc" }] },
      "sort[0].sort_by must be a column of deals views (name,",
    ],
    [
      "update_saved_view",
      { view_id: "0c991b6b-9868-4d31-9d67-1144ccc77a34" },
      "at least one field",
    ],
    [
      "update_saved_view",
      { view_id: "0c991b6b-9868-4d31-9d67-1144ccc77a34", name: null },
      "at least one field",
    ],
    ["update_saved_view", { view_id: "0c991b6b-9868-4d31-9d67-1144ccc77a34", icon: "x" }, "icon"],
    ["create_custom_dashboard", { name: "ok", layout: "[{" }, "layout must be JSON text"],
    ["create_workflow_from_recommendation", { recommendation_id: "../x" }, "recommendation_id"],
    ["resolve_siren", { siren: "12345678" }, "siren"],
    ["confirm_write", { confirmation_id: "cf_x", confirm: true }, "confirm is not a known field"],
  ];

  it("refuses an argument nested 5,000 levels deep by its field, without overflowing", async () => {
    const s = await open();
    const mark = sandbox.control.mark();
    const reply = await call(s, "create_custom_dashboard", { name: "ok", filters: deep(5_000) });
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toBe(
      "create_custom_dashboard was not called: filters.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a must not nest objects or arrays more than 16 levels deep; fix the arguments and try again (nothing was sent).",
    );
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
  });

  it.each(cases)("%s refuses %j (%s)", async (tool, args, expected) => {
    const s = await open();
    const mark = sandbox.control.mark();
    const reply = await call(s, tool, args);
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toContain(expected);
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
  });
});

describe("writes that act as the delegated user", () => {
  it("are not offered when no user is configured, and nothing is stored", async () => {
    const s = await open({ settings: { delegatedUser: null } });
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain("create_saved_view");
    expect(names).not.toContain("list_my_saved_views");
    await expect(
      call(s, "create_saved_view", { name: "Sans utilisateur", type: "deals" }),
    ).rejects.toThrow(
      "Tool create_saved_view is not offered here: it acts as a user, and none is configured (PORTFOLIO_DELEGATED_USER_EMAIL or _ID).",
    );
    expect(s.gate!.count("pending")).toBe(0);
    // A write recorded as the key's own needs no user.
    const note = await call(s, "create_operation_note", { operation_id: operation.id, text: "ok" });
    expect(note.structuredContent.status).toBe("awaiting_confirmation");
  });
});

describe("read-only mode", () => {
  it("registers no write tool at all", async () => {
    const s = await open({ writes: false });
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    const writing = INVENTORY.tools.filter((t) => !t.annotations.readOnlyHint);
    expect(writing.length).toBeGreaterThan(4);
    for (const { name } of writing) expect(names).not.toContain(name);
    expect(names.length).toBeGreaterThan(0);
    await expect(
      s.client.callTool({ name: "create_operation_note", arguments: {} }),
    ).rejects.toThrow(
      "Tool create_operation_note is not offered here: it writes, and this server is read-only.",
    );
  });
});
