import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WriteGate } from "../../src/writes/gate.js";
import { FileJournal } from "../../src/writes/journal.js";
import { clientFor } from "../helpers/api.js";
import { connectInMemory } from "../helpers/mcp.js";

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

const TTL_MS = 60_000;

/** A gate on its own journal, with a clock the test moves, and a client session on it. */
async function gateWithClock(maxPendingPerUser = 20) {
  const stateDir = mkdtempSync(join(tmpdir(), "lifecycle-"));
  let now = Date.now();
  const { api, logs } = clientFor(sandbox);
  const open = () =>
    WriteGate.open({
      store: new FileJournal(stateDir, { logger: logs.logger }),
      api,
      logger: logs.logger,
      ttlMs: TTL_MS,
      maxPendingPerUser,
      clock: () => now,
    });
  const gate = await open();
  const session = await connectInMemory(sandbox, { writes: { gate } });
  const draft = async (name: string) =>
    (await session.client.callTool({
      name: "create_custom_dashboard",
      arguments: { name },
    })) as any;
  return {
    gate,
    session,
    draft,
    open,
    files: () => readdirSync(join(stateDir, "intents")).filter((f) => f.endsWith(".json")),
    advance: (ms: number) => {
      now += ms;
    },
    async close() {
      gate.close();
      await session.close();
      await api.close();
    },
  };
}

describe("drafts nobody confirms", () => {
  it("are removed from the journal and from memory once their TTL has passed", async () => {
    const t = await gateWithClock();
    try {
      const kept = await t.draft("Encore valable");
      t.advance(TTL_MS / 2);
      const stale = await t.draft("Oublié");
      expect(t.files()).toHaveLength(2);
      t.advance(TTL_MS / 2 + 1); // the first draft is now past its TTL, the second is not
      expect(await t.gate.sweep()).toBe(1);
      expect(t.files()).toHaveLength(1);
      expect(t.gate.get(kept.structuredContent.confirmation_id)).toBeUndefined();
      expect(t.gate.get(stale.structuredContent.confirmation_id)).toBeDefined();
      const mark = sandbox.control.mark();
      const late = (await t.session.client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: kept.structuredContent.confirmation_id },
      })) as { isError?: boolean; content: Array<{ text: string }> };
      expect(late.isError).toBe(true);
      expect(late.content[0]!.text).toContain("drafts are removed once they expire");
      expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
    } finally {
      await t.close();
    }
  });

  it("are removed when the server starts again after their TTL", async () => {
    const t = await gateWithClock();
    try {
      await t.draft("Avant l'arrêt");
      t.advance(TTL_MS + 1);
      const reopened = await t.open();
      reopened.close();
      expect(t.files()).toHaveLength(0);
      expect(reopened.count("pending")).toBe(0);
    } finally {
      await t.close();
    }
  });

  it("are capped per user: one more is refused, and nothing is drafted", async () => {
    const t = await gateWithClock(2);
    try {
      await t.draft("Un");
      await t.draft("Deux");
      const third = await t.draft("Trois");
      expect(third.isError).toBe(true);
      expect(third.content[0]!.text).toBe(
        "2 drafted writes already await confirmation for this user, or were cancelled or expired less than a minute ago; confirm some, or wait a minute, before drafting another. Nothing was drafted.",
      );
      expect(t.files()).toHaveLength(2);
      t.advance(TTL_MS + 1); // expired drafts no longer count
      expect((await t.draft("Après expiration")).isError).toBeFalsy();
    } finally {
      await t.close();
    }
  });
});

describe("drafts cancelled at once, over and over", () => {
  it("keep no body, count against the cap for a minute, then are gone: the store stays bounded", async () => {
    const t = await gateWithClock(3);
    try {
      const cancel = async (name: string) => {
        const drafted = await t.draft(name);
        expect(drafted.isError).toBeFalsy();
        const id = drafted.structuredContent.confirmation_id;
        await t.session.client.callTool({
          name: "cancel_write",
          arguments: { confirmation_id: id },
        });
        return id as string;
      };
      const ids = [await cancel("Boucle 1"), await cancel("Boucle 2"), await cancel("Boucle 3")];
      // What is kept of a cancelled draft: enough for the audit, not the content.
      for (const id of ids) {
        const kept = t.gate.get(id)!;
        expect(kept.state).toBe("cancelled");
        expect(kept.body).toBeNull();
        expect(kept.preview.fields).toEqual({});
        expect(kept.bodyDigest).toMatch(/^[0-9a-f]{64}$/);
      }
      const refused = await t.draft("Boucle 4");
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toContain("cancelled or expired less than a minute ago");
      expect(t.files()).toHaveLength(3);
      t.advance(61_000);
      expect(await t.gate.sweep()).toBe(3);
      expect(t.files()).toHaveLength(0);
      expect((await t.draft("Boucle 5")).isError).toBeFalsy();
    } finally {
      await t.close();
    }
  });
});
