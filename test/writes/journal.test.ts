import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StateKeys } from "../../src/state/keys.js";
import { WriteGate } from "../../src/writes/gate.js";
import { IntentMac } from "../../src/writes/intent-mac.js";
import { damagedFiles, FileJournal } from "../../src/writes/journal.js";
import { clientFor } from "../helpers/api.js";
import { connectInMemory } from "../helpers/mcp.js";

let sandbox: Sandbox;
/** The MAC key of a state directory's journal, as the server derives it. */
const macOf = async (stateDir: string) =>
  new IntentMac((await StateKeys.open(stateDir, null)).derive("intent-mac"));
const damagedIn = async (stateDir: string) => damagedFiles(stateDir, await macOf(stateDir));
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

/**
 * A real confirmed-but-uncertain intent, made through the tools: the API did not answer, so the
 * write is left for the next start to finish.
 */
async function uncertainIntent(stateDir: string) {
  const session = await connectInMemory(sandbox, {
    writes: { stateDir },
    settings: { maxRetries: 0 },
  });
  try {
    const draft = (await session.client.callTool({
      name: "create_custom_dashboard",
      arguments: { name: `Reprise ${stateDir.slice(-6)}` },
    })) as any;
    sandbox.control.dropNext(1, { routeId: "custom_dashboard_create" });
    const confirmed = (await session.client.callTool({
      name: "confirm_write",
      arguments: { confirmation_id: draft.structuredContent.confirmation_id },
    })) as any;
    expect(confirmed.structuredContent.status).toBe("uncertain");
    return session.gate!.get(draft.structuredContent.confirmation_id)!;
  } finally {
    session.gate!.close();
    await session.close();
  }
}

describe("a damaged journal", () => {
  it("quarantines each damaged file with one line, keeps serving, and still finishes the good intent", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "journal-"));
    const good = await uncertainIntent(stateDir);
    const dir = join(stateDir, "intents");
    const whole = JSON.stringify({ ...good, id: "cf_truncated0000001", state: "uncertain" });
    const damaged: Record<string, string> = {
      "cf_truncated0000001.json": whole.slice(0, whole.indexOf('"confirmedAt"') + 20),
      "cf_empty0000000001.json": "",
      "cf_null00000000001.json": "null",
      "cf_array0000000001.json": "[1,2]",
      "cf_noop00000000001.json": JSON.stringify({
        ...good,
        id: "cf_noop00000000001",
        operation: undefined,
      }),
      "cf_otherid00000001.json": JSON.stringify(good),
    };
    for (const [name, text] of Object.entries(damaged))
      writeFileSync(join(dir, name), text, { mode: 0o600 });
    writeFileSync(join(dir, `.${good.id}.abcd1234.tmp`), "{half a write");

    const { api, logs } = clientFor(sandbox);
    const journal = new FileJournal(stateDir, { logger: logs.logger });
    const gate = await WriteGate.open({
      store: journal,
      api,
      logger: logs.logger,
      ttlMs: 900_000,
      maxPendingPerUser: 20,
    });
    try {
      expect(journal.quarantined).toBe(6);
      const aside = readdirSync(join(dir, "quarantine"));
      expect(aside).toHaveLength(6);
      for (const name of aside)
        expect(statSync(join(dir, "quarantine", name)).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
      expect(await damagedIn(stateDir)).toBe(6);

      const lines = logs.lines.map((l) => JSON.parse(l));
      const quarantine = lines.filter((l) => l.msg?.startsWith("quarantined"));
      expect(quarantine).toHaveLength(6);
      const truncated = quarantine.find((l) => l.file === "cf_truncated0000001.json");
      expect(truncated).toMatchObject({
        problem: "it is not complete JSON (truncated?)",
        id: "cf_truncated0000001",
        state: "uncertain",
        operation: "custom_dashboard_create",
        idempotencyKey: good.idempotencyKey,
      });
      expect(truncated.msg).toContain("confirmed write that may not have been delivered");
      expect(quarantine.find((l) => l.file === "cf_null00000000001.json").problem).toBe(
        "it holds null, not an intent",
      );
      expect(quarantine.find((l) => l.file === "cf_noop00000000001.json").problem).toMatch(
        /^it is not an intent \(operation: /,
      );
      expect(lines.some((l) => l.msg?.startsWith("removed a temporary file"))).toBe(true);

      // The one good intent is still finished, with its own key: one record.
      const recovered = await gate.recover();
      expect(recovered.map((i) => [i.id, i.state])).toEqual([[good.id, "succeeded"]]);
      const name = (good.body as { name: string }).name;
      expect(sandbox.control.state.data.dashboards.filter((d) => d.name === name)).toHaveLength(1);
    } finally {
      gate.close();
      await api.close();
    }
  });

  it("counts, without moving them, the files the next start will quarantine", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "journal-"));
    mkdirSync(join(stateDir, "intents"), { recursive: true });
    writeFileSync(join(stateDir, "intents", "cf_null00000000001.json"), "null");
    expect(await damagedIn(stateDir)).toBe(1);
    expect(readdirSync(join(stateDir, "intents"))).toEqual(["cf_null00000000001.json"]);
  });

  it("starts with an empty or missing quarantine as zero", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "journal-"));
    expect(await damagedIn(stateDir)).toBe(0);
    mkdirSync(join(stateDir, "intents", "quarantine"), { recursive: true });
    expect(await damagedIn(stateDir)).toBe(0);
  });
});
