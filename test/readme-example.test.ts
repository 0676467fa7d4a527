import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory } from "./helpers/mcp.js";

/**
 * The README's opening conversation, replayed tool call by tool call against the sandbox: every
 * name it quotes must be found as the assistant would find it.
 */
let sandbox: Sandbox;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;
const asked: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  mcp = await connectInMemory(sandbox, {
    writes: { mode: "auto" },
    elicit: (params) => {
      asked.push(params.message);
      return { action: "accept", content: { confirm: true } };
    },
  });
});
afterAll(async () => {
  await mcp.close();
  await sandbox.close();
});

const call = async (name: string, args: Record<string, unknown>) => {
  const reply = (await mcp.client.callTool({ name, arguments: args })) as any;
  expect(reply.isError, JSON.stringify(reply.content)).toBeFalsy();
  return reply.structuredContent;
};
const isoDay = (offsetDays: number) =>
  new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

describe("the README's opening example", () => {
  it("finds the SPV, its active operations and what is due on them in the next 30 days", async () => {
    const spvs = await call("list_spvs", { name: "SCI Aurore Rhône" });
    expect(spvs.items).toHaveLength(1);
    const active = await call("list_operations", { status: "active", spv_id: spvs.items[0].id });
    expect(active.items.map((o: { name: string }) => o.name).sort()).toEqual(
      [
        "Villa Confluence – Lille",
        "Les Terrasses Saint-Exupéry – Tours",
        "Résidence Bellevue – Nantes",
        "Villa Horizon – Mérignac",
        "Îlot Horizon – Bordeaux",
        "Le Domaine de l'Écluse – Nice",
        "Le Clos Émeraude – Boulogne-Billancourt",
      ].sort(),
    );
    const villa = active.items.find((o: { name: string }) => o.name === "Villa Horizon – Mérignac");
    const due = await call("list_calendar_events", {
      from: isoDay(0),
      to: isoDay(30),
      operation_id: villa.id,
    });
    expect(due.items.map((e: { event_type: string }) => e.event_type)).toContain("visite_chantier");
  });

  it("finds Les Terrasses Saint-Exupéry by part of its name, and writes the note once, as the key", async () => {
    const found = await call("list_operations", { name_contains: "terrasses saint-exupery" });
    expect(found.items.map((o: { name: string }) => o.name).sort()).toEqual([
      "Les Terrasses Saint-Exupéry – Mérignac",
      "Les Terrasses Saint-Exupéry – Tours",
    ]);
    const tours = found.items.find((o: { name: string }) => o.name.endsWith("Tours"));
    const text = "The developer confirmed the façade works start on Monday.";
    const done = await call("create_operation_note", {
      operation_id: tours.id,
      content: text,
      note_type: "call",
    });
    expect(asked.at(-1)).toContain(
      "Create a follow-up note: operation «Les Terrasses Saint-Exupéry – Tours»",
    );
    expect(asked.at(-1)).toContain(
      "Recorded by the API as written by: the API key sandboxdemo (the integration's service account, not a person)",
    );
    expect(done.status).toBe("succeeded");
    expect(
      sandbox.control.state.data.notes.filter(
        (n) => n.operation_id === tours.id && n.content === text,
      ),
    ).toHaveLength(1);
  });
});
