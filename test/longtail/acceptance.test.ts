import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The acceptance, as a portfolio manager's session would run it over stdio: each task
 * in at most three tool calls (the client's confirmation form not counted), each write
 * confirmed once. Run on `--sandbox` (the embedded sandbox and its export), then on an
 * external sandbox with the export in PORTFOLIO_CONTRACT_FILE, whose request log shows each
 * write delivered once.
 */
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  ) as Record<string, string>;

interface Session {
  client: Client;
  /** The confirmation forms the human was shown. */
  forms: string[];
  call(name: string, args: Record<string, unknown>): Promise<any>;
  /** Tool calls made since the last `task()`. */
  task(): number;
  close(): Promise<void>;
}

async function open(args: string[], env: Record<string, string> = {}): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...args],
    env: { ...cleanEnv(), ...env },
    stderr: "pipe",
  });
  const client = new Client(
    { name: "acceptance", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  const forms: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    forms.push(request.params.message);
    return { action: "accept", content: { confirm: true } };
  });
  await client.connect(transport);
  let calls = 0;
  return {
    client,
    forms,
    async call(name, args) {
      calls += 1;
      const reply = (await client.callTool({ name, arguments: args })) as any;
      expect(reply.isError, `${name}: ${reply.content?.[0]?.text}`).toBeFalsy();
      return reply;
    },
    task() {
      const made = calls;
      calls = 0;
      return made;
    },
    close: () => client.close(),
  };
}

/** The five tasks; returns the ids written, for the caller to check delivery. */
async function runTasks(s: Session) {
  // 1. "Acknowledge the LTV alert on Les Rives du Parc."
  const alerts = await s.call("list_alerts", { status: "open", alert_type: "ltv_breach" });
  const alert = alerts.structuredContent.items.find((a: any) =>
    a.title.includes("Les Rives du Parc"),
  );
  expect(alert, "an open LTV alert on Les Rives du Parc").toBeDefined();
  const acknowledged = await s.call("act_on_alert", {
    alert_id: alert.id,
    action: "acknowledge",
  });
  expect(acknowledged.structuredContent.status).toBe("succeeded");
  expect(s.forms.at(-1)).toContain("Les Rives du Parc");
  expect(s.task()).toBeLessThanOrEqual(3);

  // 2. "Accept the proposed date for the covenant test of Les Rives Solférino."
  const proposals = await s.call("list_calendar_events", { undecided_proposals: true });
  const event = proposals.structuredContent.items.find((e: any) =>
    e.title.includes("Les Rives Solférino"),
  );
  expect(event).toMatchObject({ proposal: true, accepted: null });
  const found = await s.call("find_api_operations", { query: "accept a proposed calendar date" });
  expect(found.structuredContent.operations[0].id).toBe("calendar_event_accept");
  const accepted = await s.call("draft_api_write", {
    operation: "calendar_event_accept",
    path: { event_id: event.id },
  });
  expect(accepted.structuredContent).toMatchObject({
    status: "succeeded",
    result: { id: event.id, accepted: true },
  });
  expect(s.forms.at(-1)).toContain("Les Rives Solférino");
  expect(s.task()).toBeLessThanOrEqual(3);

  // 3. "Show me the timeline of Les Terrasses Saint-Exupéry in Mérignac."
  const operations = await s.call("list_operations", {
    name_contains: "Terrasses Saint-Exupéry",
  });
  const operation = operations.structuredContent.items.find((o: any) =>
    o.name.includes("Mérignac"),
  );
  const timeline = await s.call("get_operation_timeline", { operation_id: operation.id });
  expect(timeline.structuredContent.items.length).toBeGreaterThan(0);
  expect(s.task()).toBeLessThanOrEqual(3);

  // 4. "What is late in its repayment schedule?"
  const repayments = await s.call("find_api_operations", {
    query: "what is late in the repayment schedule",
    kind: "read",
  });
  expect(repayments.structuredContent.operations[0].id).toBe("repayment_schedule_get");
  const schedule = await s.call("call_api_read", {
    operation: "repayment_schedule_get",
    path: { operation_id: operation.id },
  });
  const late = schedule.structuredContent.result.lines.filter((l: any) => l.status === "late");
  expect(late.length).toBeGreaterThan(0);
  expect(s.task()).toBeLessThanOrEqual(3);

  // 5. "Download the latest quarterly report of that operation."
  const documents = await s.call("call_api_read", {
    operation: "documents_list",
    query: { operation_id: operation.id, category: "reporting", limit: 1 },
  });
  const document = documents.structuredContent.items[0];
  const file = await s.call("call_api_read", {
    operation: "document_download",
    path: { document_id: document.id },
  });
  const embedded = file.content.find((c: any) => c.type === "resource");
  expect(embedded.resource.mimeType).toBe(document.content_type);
  expect(Buffer.from(embedded.resource.blob, "base64").subarray(0, 5).toString()).toBe("%PDF-");
  // Its text comes with it, extracted from the PDF: the key figures the assistant reports on.
  expect(file.structuredContent.text).toContain("Reporting trimestriel");
  expect(file.structuredContent.text).toMatch(/Encours : [\d\s\u202f,]+/);
  expect(file.content.at(-1).text).toContain(file.structuredContent.text.slice(0, 40));
  expect(s.task()).toBeLessThanOrEqual(3);

  expect(s.forms).toHaveLength(2); // one form per write, each accepted once
  return { alertId: alert.id as string, eventId: event.id as string };
}

describe("acceptance: the long tail in a scripted session", () => {
  it("with --sandbox, every task takes at most three calls and each write is confirmed once", async () => {
    const s = await open(["--sandbox"]);
    try {
      const { alertId, eventId } = await runTasks(s);
      // Written as confirmed, and only once: the records say so, and a read shows it.
      const alert = await s.call("call_api_read", {
        operation: "alert_get",
        path: { alert_id: alertId },
      });
      expect(alert.structuredContent.result.status).toBe("acknowledged");
      const event = await s.call("call_api_read", {
        operation: "calendar_event_get",
        path: { event_id: eventId },
      });
      expect(event.structuredContent.result.accepted).toBe(true);
    } finally {
      await s.close();
    }
  });

  describe("on a sandbox whose request log is visible", () => {
    let sandbox: Sandbox;
    let contractFile: string;
    beforeAll(async () => {
      sandbox = await startSandbox({ rateLimit: false });
      const exported = await fetch(
        new URL(`/_admin/keys/${sandbox.credentials.keyId}/contract.json`, sandbox.baseUrl),
      );
      contractFile = join(mkdtempSync(join(tmpdir(), "contract-")), "contract.json");
      writeFileSync(contractFile, await exported.text());
    });
    afterAll(() => sandbox.close());

    it("with the key's export as PORTFOLIO_CONTRACT_FILE, delivers each write exactly once", async () => {
      const c = sandbox.credentials;
      const mark = sandbox.control.mark();
      const s = await open([], {
        PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
        PORTFOLIO_API_KEY_ID: c.keyId,
        PORTFOLIO_API_SECRET: c.secret,
        PORTFOLIO_DELEGATED_USER_EMAIL: c.delegatedUserEmail,
        PORTFOLIO_TOKEN_PREFIX: c.tokenPrefix,
        PORTFOLIO_DELEGATION_HEADER_PREFIX: c.delegationHeaderPrefix,
        PORTFOLIO_CONTRACT_FILE: contractFile,
        PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "state-")),
      });
      try {
        const { alertId, eventId } = await runTasks(s);
        const writes = sandbox.control
          .requests({ since: mark })
          .filter((r) => r.method !== "GET" && r.routeId !== "auth_token");
        expect(writes.map((r) => [r.routeId, r.path, r.status])).toEqual([
          ["alert_acknowledge", `/v1/alerts/${alertId}/acknowledge`, 200],
          ["calendar_event_accept", `/v1/calendar/events/${eventId}/accept`, 200],
        ]);
        expect(new Set(writes.map((r) => r.headers["idempotency-key"])).size).toBe(2);
      } finally {
        await s.close();
      }
    });
  });
});

describe("acceptance: the whole API in a scripted session (issue 23)", () => {
  it("with --sandbox: a proposed covenant date, a quarterly report's figures, an erasure not offered, an alert acknowledged", async () => {
    const s = await open(["--sandbox"], { PORTFOLIO_LOG_LEVEL: "error" });
    try {
      // 1. "Accept the proposed covenant date on Les Rives Solférino": 2 calls.
      const proposals = await s.call("list_calendar_events", { undecided_proposals: true });
      const covenant = proposals.structuredContent.items.find(
        (e: any) => e.event_type === "covenant_deadline",
      );
      expect(covenant, "a proposed covenant date").toBeTruthy();
      const accept = proposals.structuredContent.next.find(
        (n: any) => n.operation === "calendar_event_accept",
      );
      expect(accept).toEqual({
        tool: "draft_api_write",
        operation: "calendar_event_accept",
        pass: 'path {"event_id": the item\'s id}',
      });
      const accepted = await s.call(accept.tool, {
        operation: accept.operation,
        path: JSON.stringify({ event_id: covenant.id }),
      });
      expect(accepted.structuredContent.status).toBe("succeeded");
      expect(s.forms.at(-1)).toContain(`event_date «${covenant.event_date}»`);
      expect(s.task()).toBe(2);

      // 2. "The key figures of the latest quarterly report of Les Rives Solférino": 2 calls.
      const found = await s.call("search_portfolio", {
        q: "rapport trimestriel Les Rives Solférino",
        types: "document",
      });
      const report = found.structuredContent.items[0];
      expect(report.title).toMatch(/^Reporting trimestriel/);
      const download = found.structuredContent.next.find(
        (n: any) => n.operation === "document_download",
      );
      const file = await s.call(download.tool, {
        operation: download.operation,
        path: JSON.stringify({ document_id: report.id }),
      });
      expect(file.structuredContent.text).toContain("Taux de commercialisation");
      expect(s.task()).toBe(2);

      // 3. "Erase my personal data", where erasure is off: one sentence, nothing drafted.
      const mark = s.forms.length;
      const erase = await s.call("find_api_operations", { query: "erase my personal data" });
      const [first] = erase.structuredContent.operations;
      expect(first.id).toBe("rgpd_erasure_request");
      expect(first.not_offered).toBe(
        "an RGPD erasure, which cannot be undone: offered only when PORTFOLIO_ALLOW_SENSITIVE lists rgpd_erasure_request or delegated",
      );
      const refused = (await s.client.callTool({
        name: "draft_api_write",
        arguments: { operation: "rgpd_erasure_create" },
      })) as any;
      expect(refused.content[0].text).toBe(
        "rgpd_erasure_request is not offered here: an RGPD erasure, which cannot be undone: offered only when PORTFOLIO_ALLOW_SENSITIVE lists rgpd_erasure_request or delegated (nothing was drafted).",
      );
      expect(s.forms.length).toBe(mark);
      s.task();

      // 4. "Acknowledge an open alert": 2 calls.
      const alerts = await s.call("list_alerts", { status: "open" });
      const alert = alerts.structuredContent.items[0];
      expect(alerts.structuredContent.next).toContainEqual({
        tool: "act_on_alert",
        pass: "alert_id: the item's id",
      });
      const acknowledged = await s.call("act_on_alert", {
        alert_id: alert.id,
        action: "acknowledge",
      });
      expect(acknowledged.structuredContent.status).toBe("succeeded");
      expect(s.task()).toBe(2);
    } finally {
      await s.close();
    }
  }, 60_000);
});
