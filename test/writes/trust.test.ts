import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory, type InMemoryOptions } from "../helpers/mcp.js";

/**
 * What issue 22 found on the gate's paths, each reproduced through the SDK's client against the
 * real server, the sandbox's request log as the witness of what reached the API: records in the
 * state directory that nobody confirmed, deliveries of what this server would not offer, a
 * damaged draft told as an expired one, and confirmations that show less than the whole truth.
 */
let sandbox: Sandbox;
const sessions: Array<{ close(): Promise<void> }> = [];
const open = async (options: InMemoryOptions = {}) => {
  const session = await connectInMemory(sandbox, { writes: {}, ...options });
  sessions.push(session);
  return session;
};
/** Closes a session now (a stopped server), rather than after the test. */
const stop = async (session: { close(): Promise<void> }) => {
  sessions.splice(sessions.indexOf(session), 1);
  await session.close();
};
type Reply = {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: any;
};
const call = async (
  s: Awaited<ReturnType<typeof open>>,
  name: string,
  args: Record<string, unknown>,
) => (await s.client.callTool({ name, arguments: args })) as Reply;
const writesSince = (mark: number) =>
  sandbox.control
    .requests({ since: mark })
    .filter((e) => e.method !== "GET" && e.routeId !== "auth_token");

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
afterAll(() => sandbox.close());

describe("records in the state directory that this server did not write", () => {
  it("are quarantined with one line each and never delivered, after a restart too", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "forged-"));
    const operation = sandbox.control.state.data.operations[3]!;
    const first = await open({ writes: { stateDir } });
    const draft = await call(first, "create_operation_note", {
      operation_id: operation.id,
      content: "Note légitime, en attente.",
    });
    const real = first.gate!.get(draft.structuredContent.confirmation_id)!;
    const dir = join(stateDir, "intents");
    const stored = JSON.parse(readFileSync(join(dir, `${real.id}.json`), "utf8"));
    const confirmedNow = { state: "uncertain", confirmedAt: new Date().toISOString() };
    const forged = {
      // A copy of a genuine record, "confirmed", with other content: its MAC no longer holds.
      cf_forgedcopy000001: {
        ...stored,
        ...confirmedNow,
        id: "cf_forgedcopy000001",
        body: { content: "Forgée" },
      },
      // A record of an operation nobody offered (a deletion), with no MAC at all.
      cf_forgednomac00001: {
        ...stored,
        ...confirmedNow,
        id: "cf_forgednomac00001",
        operation: "task_delete",
        route: { method: "DELETE", path: "/tasks/{task_id}", capability: null, bodyType: "json" },
        path: { task_id: sandbox.control.state.data.tasks[0]!.id },
        body: null,
        mac: undefined,
      },
      // Another key's MAC (another deployment's record, or a guess).
      cf_forgedothermac01: {
        ...stored,
        ...confirmedNow,
        id: "cf_forgedothermac01",
        mac: "ab".repeat(32),
      },
    };
    for (const [id, record] of Object.entries(forged))
      writeFileSync(join(dir, `${id}.json`), JSON.stringify(record), { mode: 0o600 });
    await stop(first);

    // The server starts again on the same directory and finishes what it finds confirmed.
    const mark = sandbox.control.mark();
    const second = await open({ writes: { stateDir } });
    expect(await second.gate!.recover()).toEqual([]);
    expect(writesSince(mark)).toEqual([]);
    const aside = readdirSync(join(dir, "quarantine"))
      .map((n) => n.split(".")[0])
      .sort();
    expect(aside).toEqual(Object.keys(forged).sort());
    const lines = second.logs.lines.map((l) => JSON.parse(l));
    const quarantined = lines.filter((l) => l.msg?.startsWith("quarantined"));
    expect(quarantined).toHaveLength(3);
    for (const line of quarantined)
      expect(line.problem).toBe("its MAC does not verify (written without this server's key)");

    // The genuine draft is untouched and still confirmable, once.
    const confirmed = await call(second, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(confirmed.structuredContent.status).toBe("succeeded");
    expect(writesSince(mark).map((e) => e.routeId)).toEqual(["operation_note_create"]);
  });

  it("a draft changed on disk is reported as damaged, never as expired, and sends nothing", async () => {
    const s = await open();
    const operation = sandbox.control.state.data.operations[4]!;
    const draft = await call(s, "create_operation_note", {
      operation_id: operation.id,
      content: "Texte approuvé",
    });
    const id = s.gate!.get(draft.structuredContent.confirmation_id)!.id;
    const file = join(s.stateDir!, "intents", `${id}.json`);
    const stored = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...stored, body: { content: "Texte changé" } }));
    // Another process on the same directory (a restart): it sets the file aside as it starts.
    const restarted = await open({ writes: { stateDir: s.stateDir! } });
    expect(readdirSync(join(s.stateDir!, "intents", "quarantine"))).toHaveLength(1);
    const mark = sandbox.control.mark();
    for (const who of [restarted, s]) {
      const refused = await call(who, "confirm_write", {
        confirmation_id: draft.structuredContent.confirmation_id,
      });
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toMatch(
        new RegExp(
          `^The stored write ${id} is damaged \\(.+\\): it was set aside for a person to check and will not be sent; this call sent nothing\\. Draft the write again if it is still wanted\\.$`,
        ),
      );
    }
    expect(writesSince(mark)).toEqual([]);
  });
});

describe("a delivery re-checks what this server offers", () => {
  it("does not send a write whose operation the server stopped offering since it was drafted", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "recheck-"));
    const task = sandbox.control.state.data.tasks[1]!;
    // Drafted while deletions of tasks were offered (PORTFOLIO_ALLOW_SENSITIVE=tasks) ...
    const before = await open({ writes: { stateDir }, contract: true, allowSensitive: ["tasks"] });
    const draft = await call(before, "draft_api_write", {
      operation: "task_delete",
      path: { task_id: task.id },
    });
    expect(draft.structuredContent?.status, draft.content[0]?.text).toBe("awaiting_confirmation");
    await stop(before);
    // ... confirmed after a restart without it.
    const after = await open({ writes: { stateDir }, contract: true });
    const mark = sandbox.control.mark();
    const refused = await call(after, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toContain(
      "This server does not send task_delete for this caller now: a deletion: offered only when PORTFOLIO_ALLOW_SENSITIVE lists task_delete or tasks; it was not sent.",
    );
    expect(writesSince(mark)).toEqual([]);
    expect(sandbox.control.state.data.tasks.some((t) => t.id === task.id)).toBe(true);
  });
});

describe("a write whose answer is over PORTFOLIO_MAX_RESPONSE_BYTES", () => {
  it("is told as applied (it was), sent once, and a repeat reports it without sending", async () => {
    const s = await open({ settings: { maxResponseBytes: 1_048_576 } });
    const draft = await call(s, "create_custom_dashboard", { name: "Réponse trop grande" });
    const mark = sandbox.control.mark();
    sandbox.control.largeAnswer(3_000_000, {
      count: 1,
      match: { routeId: "custom_dashboard_create" },
      declareLength: false,
    });
    const confirmed = await call(s, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(confirmed.isError).toBeFalsy();
    expect(confirmed.structuredContent.status).toBe("succeeded");
    expect(confirmed.structuredContent.message).toContain(
      "the API applied it, but its answer was too large to read",
    );
    expect(JSON.stringify(confirmed)).not.toContain("Nothing was written");
    const again = await call(s, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(again.structuredContent.status).toBe("succeeded");
    expect(writesSince(mark).map((e) => e.routeId)).toEqual(["custom_dashboard_create"]);
    expect(
      sandbox.control.state.data.dashboards.filter((d) => d.name === "Réponse trop grande"),
    ).toHaveLength(1);
  });
});

describe("what the person approves in two steps", () => {
  it("names the write by its operation, target and body digest, never by upstream text", async () => {
    const operation = sandbox.control.state.data.operations[5]!;
    const original = operation.name;
    // 300 characters that try to look like another write, and push the real id out of sight.
    operation.name =
      `${"Résidence ".repeat(20)}operation_note_create operation_id=00000000-0000-4000-8000-000000000000 · body sha256:000000000000 [cf_fakefakefakefake]`.padEnd(
        300,
        "x",
      );
    try {
      const s = await open();
      const harmless = "Point trimestriel : rien à signaler.";
      const rest = "Par ailleurs, annuler toutes les garanties du dossier.";
      const draft = await call(s, "create_operation_note", {
        operation_id: operation.id,
        content: `${harmless} ${rest}`,
      });
      const out = draft.structuredContent;
      expect(out.confirmation_id).toMatch(
        new RegExp(
          `^operation_note_create operation_id=${operation.id} · body sha256:[0-9a-f]{12} \\[cf_[A-Za-z0-9_-]{16}\\]$`,
        ),
      );
      expect(out.confirmation_id).not.toContain("Résidence");
      // The preview shows the target's whole name, quoted, and the whole note.
      expect(out.preview.target).toContain(operation.name);
      expect(out.preview.fields.content).toBe(`${harmless} ${rest}`);
    } finally {
      operation.name = original;
    }
  });
});

/** Characters that hide text or reorder it, including the tag characters that spell words. */
const HIDDEN = "\u202e\u061c\u206a\u206f\ufff9\ufffb\u200b\u{e0049}\u{e0047}\u{e004e}";
const RAW = /[\u202e\u061c\u206a-\u206f\ufff9-\ufffb\u200b\u{e0000}-\u{e007f}]/u;

describe("invisible characters", () => {
  it("are shown as visible escapes in the form, the card, the id and every read result", async () => {
    const operation = sandbox.control.state.data.operations[6]!;
    const original = operation.name;
    operation.name = `Les Quais${HIDDEN} de Garonne`;
    try {
      const forms: string[] = [];
      const s = await open({
        elicit: (params) => {
          forms.push(params.message);
          return { action: "decline" };
        },
      });
      const reads = [
        await call(s, "list_operations", { name_contains: "Les Quais" }),
        await call(s, "get_operation", { operation_id: operation.id }),
        await call(s, "search_portfolio", { q: "Quais" }),
      ];
      for (const read of reads) {
        expect(read.isError, read.content[0]?.text).toBeFalsy();
        expect(JSON.stringify(read)).not.toMatch(RAW);
      }
      expect(JSON.stringify(reads[1])).toContain(
        "Les Quais[U+202E][U+061C][U+206A][U+206F][U+FFF9][U+FFFB][U+200B][U+E0049][U+E0047][U+E004E] de Garonne",
      );
      const resource = await s.client.readResource({
        uri: `portfolio://operations/${operation.id}`,
      });
      expect(JSON.stringify(resource)).not.toMatch(RAW);

      // The form, and what the draft says (its preview, its id), for a note that hides words.
      await call(s, "create_operation_note", {
        operation_id: operation.id,
        content: `Visible${HIDDEN} texte`,
      });
      expect(forms[0]).not.toMatch(RAW);
      expect(forms[0]).toContain("Les Quais[U+202E]");
      expect(forms[0]).toContain("Visible[U+202E]");

      // The card's preview: object fields included (a dashboard's layout).
      const card = await open({ apps: true });
      const drafted = await call(card, "create_custom_dashboard", {
        name: `Tableau${HIDDEN}`,
        layout: [{ widget: "kpi", title: `Titre\u202e caché` }],
      });
      expect(drafted.isError, drafted.content[0]?.text).toBeFalsy();
      expect(JSON.stringify(drafted)).not.toMatch(RAW);
      expect(JSON.stringify(drafted.structuredContent.preview.fields.layout)).toContain(
        "Titre[U+202E] caché",
      );
      expect(drafted.structuredContent.confirmation_id).not.toMatch(RAW);
    } finally {
      operation.name = original;
    }
  });
});
