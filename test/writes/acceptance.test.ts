import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

describe("a scripted session over stdio with --sandbox", () => {
  it("drafts a note, confirms it once, sees it listed; confirming again changes nothing", async () => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
    ) as Record<string, string>;
    const client = new Client({ name: "acceptance", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "--sandbox"],
        env,
        stderr: "ignore",
      }),
    );
    const call = async (name: string, args: Record<string, unknown>) =>
      ((await client.callTool({ name, arguments: args })) as { structuredContent: any })
        .structuredContent;
    try {
      const [operation] = (await call("list_operations", { status: "travaux", limit: 1 })).items;
      const notesBefore = (
        await call("list_operation_notes", { operation_id: operation.id, limit: 200 })
      ).total;

      const draft = await call("create_operation_note", {
        operation_id: operation.id,
        content: "Point mensuel : planning tenu, commercialisation à 64 %.",
        note_type: "reporting",
      });
      expect(draft.status).toBe("awaiting_confirmation");
      expect(draft.preview.target).toContain(operation.name);
      expect(
        (await call("list_operation_notes", { operation_id: operation.id, limit: 200 })).total,
      ).toBe(notesBefore);

      const confirmed = await call("confirm_write", { confirmation_id: draft.confirmation_id });
      expect(confirmed.status).toBe("succeeded");
      const notes = await call("list_operation_notes", { operation_id: operation.id, limit: 200 });
      expect(notes.total).toBe(notesBefore + 1);
      expect(notes.items.map((n: { id: string }) => n.id)).toContain(confirmed.result.id);

      const again = await call("confirm_write", { confirmation_id: draft.confirmation_id });
      expect(again.result.id).toBe(confirmed.result.id);
      expect(
        (await call("list_operation_notes", { operation_id: operation.id, limit: 200 })).total,
      ).toBe(notesBefore + 1);
    } finally {
      await client.close();
    }
  });
});
