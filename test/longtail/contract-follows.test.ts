import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_KEYS, type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normaliseContract } from "../../src/api/contract/load.js";
import { resolveRoutes } from "../../src/api/routes.js";
import { connectInMemory } from "../helpers/mcp.js";

/** The server follows the key's contract: where it puts an operation, and what it leaves out. */

const exportOf = async (sandbox: Sandbox, keyId = sandbox.credentials.keyId) =>
  (await (
    await fetch(new URL(`/_admin/keys/${keyId}/contract.json`, sandbox.baseUrl))
  ).json()) as any;

const text = (reply: any): string => reply.content[0].text;

describe("a contract that moves operations", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({
      rateLimit: false,
      routePaths: {
        alert_acknowledge: "/alert-actions/{alert_id}/ack",
        documents_list: "/library/documents",
      },
    });
  });
  afterAll(() => sandbox.close());

  it("sends curated and long-tail calls to the paths the export gives", async () => {
    const mcp = await connectInMemory(sandbox, {
      contract: true,
      writes: { mode: "elicitation" },
      elicit: () => ({ action: "accept", content: { confirm: true } }),
    });
    try {
      const alerts = (await mcp.client.callTool({
        name: "list_alerts",
        arguments: { status: "open", limit: 1 },
      })) as any;
      const alertId = alerts.structuredContent.items[0].id;
      const mark = sandbox.control.mark();
      const acknowledged = (await mcp.client.callTool({
        name: "act_on_alert",
        arguments: { alert_id: alertId, action: "acknowledge" },
      })) as any;
      expect(acknowledged.structuredContent.status).toBe("succeeded");
      const documents = (await mcp.client.callTool({
        name: "call_api_read",
        arguments: { operation: "documents_list", query: { limit: 1 } },
      })) as any;
      expect(documents.isError).toBeFalsy();
      const sent = sandbox.control.requests({ since: mark });
      expect(sent.filter((r) => r.method === "POST").map((r) => [r.path, r.status])).toEqual([
        [`/v1/alert-actions/${alertId}/ack`, 200],
      ]);
      expect(
        sent.filter((r) => r.routeId === "documents_list").map((r) => [r.path, r.status]),
      ).toEqual([["/v1/library/documents", 200]]);
    } finally {
      await mcp.close();
    }
  });
});

describe("a contract that omits operations", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ rateLimit: false });
  });
  afterAll(() => sandbox.close());

  it("offers only what it lists: no curated tool, no search result, no call for the rest", async () => {
    // The read-only key's export: reads only, as an administrator may export it for this key.
    const mcp = await connectInMemory(sandbox, {
      contract: DEMO_KEYS.readOnly.keyId,
      writes: { mode: "two-step" },
    });
    try {
      const names = (await mcp.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("list_alerts");
      expect(names).toContain("call_api_read");
      for (const write of ["act_on_alert", "create_operation_note", "draft_api_write"])
        expect(names).not.toContain(write);
      const mark = sandbox.control.mark();
      const found = (await mcp.client.callTool({
        name: "find_api_operations",
        arguments: { query: "acknowledge the alert" },
      })) as any;
      expect(found.structuredContent.operations.every((op: any) => op.kind === "read")).toBe(true);
      const refused = (await mcp.client.callTool({
        name: "call_api_read",
        arguments: { operation: "alert_acknowledge", path: { alert_id: "x" } },
      })) as any;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/^The API key's contract has no operation alert_acknowledge/);
      expect(text(refused)).toContain("nothing was sent");
      expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
    } finally {
      await mcp.close();
    }
  });
});

describe("a contract changed between draft and confirmation", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ rateLimit: false });
  });
  afterAll(() => sandbox.close());

  it("sends the confirmed write to the route it was drafted against, not where it moved", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "state-"));
    const before = await connectInMemory(sandbox, {
      contract: true,
      writes: { mode: "two-step", stateDir },
    });
    const alerts = (await before.client.callTool({
      name: "list_alerts",
      arguments: { status: "open", limit: 1 },
    })) as any;
    const alertId = alerts.structuredContent.items[0].id;
    const drafted = (await before.client.callTool({
      name: "act_on_alert",
      arguments: { alert_id: alertId, action: "acknowledge" },
    })) as any;
    expect(drafted.structuredContent?.status, text(drafted)).toBe("awaiting_confirmation");
    await before.close();

    // The restart reads a contract in which the operation lives elsewhere.
    const moved = await exportOf(sandbox);
    const from = "/alerts/{alert_id}/acknowledge";
    moved.paths["/alert-actions/{alert_id}/ack"] = moved.paths[from];
    delete moved.paths[from];
    const after = await connectInMemory(sandbox, {
      contract: resolveRoutes(null, normaliseContract(moved, "a moved export")),
      writes: { mode: "two-step", stateDir },
    });
    try {
      const mark = sandbox.control.mark();
      const confirmed = (await after.client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: drafted.structuredContent.confirmation_id },
      })) as any;
      expect(confirmed.structuredContent?.status, text(confirmed)).toBe("succeeded");
      expect(
        sandbox.control
          .requests({ since: mark })
          .filter((r) => r.routeId !== "auth_token")
          .map((r) => r.path),
      ).toEqual([`/v1/alerts/${alertId}/acknowledge`]);
    } finally {
      await after.close();
    }
  });
});

describe("a key changed since its export", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ rateLimit: false });
  });
  afterAll(() => sandbox.close());

  it("turns the API's refusals into one sentence, and later searches say they were refused", async () => {
    // The full key's export, but the API now lets this key call two routes only.
    const mcp = await connectInMemory(sandbox, {
      contract: true,
      settings: { keyId: DEMO_KEYS.limited.keyId, secret: DEMO_KEYS.limited.secret },
      writes: { mode: "two-step" },
    });
    try {
      const refused = (await mcp.client.callTool({
        name: "call_api_read",
        arguments: { operation: "settings_business_get" },
      })) as any;
      expect(refused.isError).toBe(true);
      const sentence = text(refused);
      expect(sentence).toMatch(/settings_business_get/);
      expect(sentence.split(/(?<=\.) /).length).toBeLessThanOrEqual(2);
      const found = (await mcp.client.callTool({
        name: "find_api_operations",
        arguments: { query: "business settings" },
      })) as any;
      const hit = found.structuredContent.operations.find(
        (op: any) => op.id === "settings_business_get",
      );
      expect(hit.refused).toBe(sentence);
      expect(text(found)).toContain("refused earlier in this session");

      // A write, refused when it is confirmed: remembered the same way.
      const eventId = sandbox.control.state.data.calendarEvents[0]!.id;
      const drafted = (await mcp.client.callTool({
        name: "draft_api_write",
        arguments: { operation: "calendar_event_accept", path: { event_id: eventId } },
      })) as any;
      const confirmed = (await mcp.client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: drafted.structuredContent.confirmation_id },
      })) as any;
      expect(confirmed.isError).toBe(true);
      expect(text(confirmed)).toContain("Nothing was written.");
      const again = (await mcp.client.callTool({
        name: "find_api_operations",
        arguments: { query: "accept a proposed calendar event" },
      })) as any;
      const accept = again.structuredContent.operations.find(
        (op: any) => op.id === "calendar_event_accept",
      );
      expect(accept.refused).toMatch(/^The Partner API refused the write: /);
    } finally {
      await mcp.close();
    }
  });
});
