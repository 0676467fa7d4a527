import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory } from "../helpers/mcp.js";

/**
 * What a person is shown for a long-tail write, built from the schema: the summary as the
 * action, the target by name, only the fields given (null as cleared, decimals verbatim), who
 * the API records as the author, and warnings. Every form is declined: nothing is sent.
 */
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

async function formFor(args: Record<string, unknown>, allowSensitive: string[] = []) {
  const forms: string[] = [];
  const mcp = await connectInMemory(sandbox, {
    contract: true,
    allowSensitive,
    writes: { mode: "elicitation" },
    elicit: (request) => {
      forms.push((request as { message: string }).message);
      return { action: "decline" };
    },
  });
  try {
    const mark = sandbox.control.mark();
    const reply = (await mcp.client.callTool({ name: "draft_api_write", arguments: args })) as any;
    expect(reply.isError, reply.content[0].text).toBeFalsy();
    expect(reply.structuredContent.status).toBe("cancelled");
    const writes = sandbox.control
      .requests({ since: mark })
      .filter((r) => r.method !== "GET" && r.routeId !== "auth_token");
    expect(writes, "a declined draft sends nothing").toEqual([]);
    expect(forms).toHaveLength(1);
    return forms[0] as string;
  } finally {
    await mcp.close();
  }
}

describe("a long-tail write's confirmation form", () => {
  it("names the target, shows only the fields given, and null as cleared", async () => {
    const event = sandbox.control.state.data.calendarEvents[0]!;
    const form = await formFor({
      operation: "calendar_event_update",
      path: { event_id: event.id },
      body: { title: "Visite décalée", description: null },
    });
    expect(form.split("\n")).toEqual([
      `Change a calendar event: calendar «${event.title}» (event_date «${event.event_date}», event_type «${event.event_type}»${event.operation_id ? `, operation «${sandbox.control.state.data.operations.find((o) => o.id === event.operation_id)!.name}»` : ""})`,
      "Recorded by the API as written by: the API key sandboxdemo (the integration's service account, not a person)",
      "title: «Visite décalée»",
      "description: cleared (null)",
      "Nothing is written unless you accept.",
    ]);
  });

  it("shows decimal amounts exactly as they will be sent, and the ids when there is no name", async () => {
    const operation = sandbox.control.state.data.operations[0]!;
    const form = await formFor({
      operation: "repayment_create",
      path: { operation_id: operation.id },
      body: { amount: "1250000.50", value_date: "2026-11-20" },
    });
    expect(form).toContain(`: operations «${operation.name}»`);
    expect(form).toContain("amount: «1250000.50»");
    expect(form).toContain("value_date: «2026-11-20»");
    const missing = "5ced923a-d6bb-4559-8481-29af260cd031";
    const unknown = await formFor({
      operation: "calendar_event_update",
      path: { event_id: missing },
      body: { title: "x" },
    });
    expect(unknown.split("\n")[0]).toBe(`Change a calendar event: event_id ${missing}`);
  });

  it.each([
    ["calendar_event_accept", "calendarEvents", "event_id", ["title", "event_date", "event_type"]],
    ["notification_mark_read", "notifications", "notification_id", ["title", "severity"]],
    ["task_update", "tasks", "task_id", ["title", "due_date", "status"]],
    ["document_update", "documents", "document_id", ["name", "document_date"]],
    ["deal_update", "deals", "deal_id", ["name", "status"]],
    ["extraction_job_cancel", "extractionJobs", "job_id", ["status"]],
  ] as const)(
    "%s shows the target's identifying and date fields from the read that names it",
    async (operation, collection, param, fields) => {
      const data = sandbox.control.state.data as unknown as Record<
        string,
        Array<Record<string, unknown>>
      >;
      const target =
        data[collection]!.find((r) => fields.every((f) => r[f] !== null && r[f] !== undefined)) ??
        data[collection]![0]!;
      const body =
        operation === "task_update"
          ? { title: "Relancer le notaire" }
          : operation === "document_update"
            ? { description: "Version signée" }
            : operation === "deal_update"
              ? { montant_estime: "100000.00" }
              : undefined;
      const form = await formFor({
        operation,
        path: { [param]: target.id },
        ...(body ? { body } : {}),
      });
      const line = form.split("\n")[0]!;
      for (const field of fields)
        if (field === "title" || field === "name") expect(line).toContain(`«${target[field]}»`);
        else expect(line).toContain(`${field} «${target[field]}»`);
      if (typeof target.operation_id === "string") {
        const name = sandbox.control.state.data.operations.find(
          (o) => o.id === target.operation_id,
        )?.name;
        expect(line).toContain(`operation «${name}»`);
      }
    },
  );

  it("warns of a deletion, and of an irreversible erasure that acts as the user", async () => {
    const task = sandbox.control.state.data.tasks[0]!;
    const deletion = await formFor({ operation: "task_delete", path: { task_id: task.id } }, [
      "tasks",
    ]);
    expect(deletion).toContain("Warning: This deletes the record.");
    const erasure = await formFor(
      { operation: "rgpd_erasure_request", body: { reason: "Départ de l'entité" } },
      ["rgpd_erasure_request"],
    );
    expect(erasure).toContain(
      `Recorded by the API as written by: ${sandbox.credentials.delegatedUserEmail}`,
    );
    expect(erasure).toContain(
      "Warning: Irreversible: the personal data will be erased, and no route withdraws this.",
    );
  });
});
