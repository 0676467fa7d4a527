import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory, type InMemoryOptions } from "../helpers/mcp.js";

/**
 * Lists and search hits name what they point to (issue 23): an operation's name beside its id,
 * an SPV's beside its id, a document's date, type and size beside it or in its hit. The names
 * come from the server's directory, one walk of each list a minute for every client, never a
 * read per row; a caller not offered a list is not told what it holds. Through the SDK's client
 * against the sandbox, whose request log counts the reads.
 */
let sandbox: Sandbox;
const sessions: Array<{ close(): Promise<void> }> = [];
const open = async (options: InMemoryOptions = {}) => {
  const session = await connectInMemory(sandbox, { contract: true, ...options });
  sessions.push(session);
  return session;
};
type Session = Awaited<ReturnType<typeof open>>;
const ok = async (s: Session, name: string, args: Record<string, unknown> = {}) => {
  const reply = (await s.client.callTool({ name, arguments: args })) as any;
  expect(reply.isError, JSON.stringify(reply.content)).toBeFalsy();
  return reply;
};

const data = () => sandbox.control.state.data;
const operationName = (id: string | null) => data().operations.find((o) => o.id === id)?.name;
const spvName = (id: string | null) => data().spvs.find((s) => s.id === id)?.name;
const requests = (since: number, routeId: string) =>
  sandbox.control.requests({ since, routeId }).length;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
afterAll(() => sandbox.close());

describe("names beside ids", () => {
  it("names each event's operation and SPV, reading each directory once for any number of rows", async () => {
    const s = await open();
    const mark = sandbox.control.mark();
    const first = (await ok(s, "list_calendar_events", { limit: 50 })).structuredContent;
    expect(first.items.length).toBeGreaterThan(20);
    for (const event of first.items) {
      expect(event.operation_name).toBe(operationName(event.operation_id) ?? null);
      expect(event.spv_name).toBe(spvName(event.spv_id) ?? null);
    }
    expect(first.items.filter((e: any) => e.operation_name !== null).length).toBeGreaterThan(20);
    // The row's name comes right after its id, in the table the model reads too.
    const table = (await ok(s, "list_calendar_events", { limit: 1 })).content[0].text as string;
    expect(table).toContain("operation_id | operation_name | spv_id | spv_name");
    // One walk of each directory for 50 rows and a second list: no read per row.
    expect(requests(mark, "operations_list")).toBe(1);
    expect(requests(mark, "spvs_list")).toBe(1);
    expect(requests(mark, "calendar_list")).toBe(2);

    const operations = (await ok(s, "list_operations", { limit: 10 })).structuredContent;
    for (const o of operations.items) expect(o.spv_name).toBe(spvName(o.spv_id));
    const deals = (await ok(s, "list_deals", { limit: 100 })).structuredContent;
    const linked = deals.items.filter((d: any) => d.operation_id !== null);
    expect(linked.length).toBeGreaterThan(0);
    for (const d of linked) expect(d.operation_name).toBe(operationName(d.operation_id));
    // list_operations' own page, and still the one walk of the directory.
    expect(requests(mark, "operations_list")).toBe(2);
  });

  it("names the operations of a long-tail list, beside the id, with every row alike", async () => {
    const s = await open();
    const reply = await ok(s, "call_api_read", {
      operation: "notifications_list",
      query: JSON.stringify({ limit: 30 }),
    });
    const rows = reply.structuredContent.items;
    expect(rows.some((n: any) => n.operation_id !== null)).toBe(true);
    for (const n of rows) {
      expect(Object.keys(n).indexOf("operation_name")).toBe(
        Object.keys(n).indexOf("operation_id") + 1,
      );
      expect(n.operation_name).toBe(operationName(n.operation_id) ?? null);
    }
  });

  it("keeps a name the API gave (the board's tasks) and names an extraction job's document", async () => {
    const s = await open();
    const task = data().tasks[0]!;
    const tasks = (
      await ok(s, "call_api_read", {
        operation: "operation_tasks_list",
        path: JSON.stringify({ operation_id: task.operation_id }),
      })
    ).structuredContent.items;
    expect(tasks.length).toBeGreaterThan(0);
    for (const t of tasks) expect(t.operation_name).toBe(operationName(task.operation_id));
    const jobs = (await ok(s, "call_api_read", { operation: "extraction_jobs_list", query: "{}" }))
      .structuredContent.items;
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs) {
      const document = data().documents.find((d) => d.id === job.document_id)!;
      expect(job).toMatchObject({
        document_date: document.document_date,
        content_type: document.content_type,
        size_bytes: expect.any(Number),
      });
    }
  });

  it("says a found document's date, type and size in search_portfolio's hits", async () => {
    const s = await open();
    const hits = (
      await ok(s, "search_portfolio", { q: "rapport trimestriel", types: "document,operation" })
    ).structuredContent.items;
    const documents = hits.filter((h: any) => h.type === "document");
    expect(documents.length).toBeGreaterThan(0);
    for (const hit of documents) {
      const document = data().documents.find((d) => d.id === hit.id)!;
      expect(hit).toMatchObject({
        document_date: document.document_date,
        content_type: "application/pdf",
      });
      // The size of the file a download would bring, as the sandbox renders it.
      expect(hit.size_bytes).toBe(document.size_bytes);
      expect(hit.size_bytes).toBeGreaterThan(1_000);
    }
    for (const hit of hits.filter((h: any) => h.type !== "document"))
      expect(hit).toMatchObject({ document_date: null, content_type: null, size_bytes: null });
  });

  it("tells a caller not offered a list nothing it holds, and does not read it", async () => {
    const s = await open({ allowedTools: ["list_calendar_events"] });
    const mark = sandbox.control.mark();
    const events = (await ok(s, "list_calendar_events", { limit: 5 })).structuredContent.items;
    for (const event of events)
      expect(event).toMatchObject({ operation_name: null, spv_name: null });
    expect(requests(mark, "operations_list")).toBe(0);
    expect(requests(mark, "spvs_list")).toBe(0);
  });
});
