import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory } from "../helpers/mcp.js";

/**
 * The calendar's manual creation names its own durable identity (`client_request_id`, spec
 * part 2): the server makes one when drafting, keeps it for every retry, and tells the user
 * when the API answers with a creation it had already made.
 */
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

const event = {
  title: "Comité d'investissement – Les Rives du Parc",
  event_date: "2026-12-14",
  event_type: "custom",
};

describe("manual calendar creations", () => {
  it("get a client_request_id made once by the server; a replayed receipt says already created", async () => {
    const mcp = await connectInMemory(sandbox, { contract: true, writes: { mode: "two-step" } });
    try {
      const draft = async (body: Record<string, unknown>) => {
        const drafted = (await mcp.client.callTool({
          name: "draft_api_write",
          arguments: { operation: "calendar_event_create", body },
        })) as any;
        expect(drafted.isError, drafted.content[0].text).toBeFalsy();
        return drafted.structuredContent.confirmation_id as string;
      };
      const confirm = async (confirmation_id: string) =>
        (
          (await mcp.client.callTool({
            name: "confirm_write",
            arguments: { confirmation_id },
          })) as any
        ).structuredContent;

      const mark = sandbox.control.mark();
      const first = await confirm(await draft(event));
      expect(first.status).toBe("succeeded");
      expect(first.message).toMatch(/^Written, once\./);
      const receipt = first.result.idempotency_receipt;
      expect(receipt).toMatchObject({ replayed: false });
      expect(receipt.client_request_id).toMatch(/^pmcp-[0-9a-f-]{36}$/);

      // The same creation drafted again by the model, with the identity the API returned: a
      // new intent and a new Idempotency-Key, yet the API creates nothing new.
      const again = await confirm(
        await draft({ ...event, client_request_id: receipt.client_request_id }),
      );
      expect(again.status).toBe("succeeded");
      expect(again.message).toMatch(/^Already created:/);
      expect(again.result.id).toBe(first.result.id);

      const creations = sandbox.control
        .requests({ since: mark })
        .filter((r) => r.routeId === "calendar_event_create");
      expect(creations).toHaveLength(2);
      expect(new Set(creations.map((r) => r.headers["idempotency-key"])).size).toBe(2);
      expect(new Set(creations.map((r) => (r.body as any).client_request_id)).size).toBe(1);
      const listed = (await mcp.client.callTool({
        name: "list_calendar_events",
        arguments: { from: event.event_date, to: event.event_date },
      })) as any;
      expect(
        listed.structuredContent.items.filter((e: any) => e.title === event.title),
      ).toHaveLength(1);
    } finally {
      await mcp.close();
    }
  });
});
