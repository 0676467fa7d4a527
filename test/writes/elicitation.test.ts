import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ConfirmMode } from "../../src/config.js";
import { connectInMemory } from "../helpers/mcp.js";

let sandbox: Sandbox;
const sessions: Array<{ close(): Promise<void> }> = [];
let operation: { id: string; name: string };
const notesOf = (id: string) =>
  sandbox.control.state.data.notes.filter((n) => n.operation_id === id);

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  operation = sandbox.control.state.data.operations[30]!;
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
});
afterAll(() => sandbox.close());

async function withAnswer(answer: ElicitResult, mode: ConfirmMode = "auto") {
  const asked: Array<{ message: string; requestedSchema: unknown }> = [];
  const session = await connectInMemory(sandbox, {
    writes: { mode },
    elicit: (params) => {
      asked.push(params as { message: string; requestedSchema: unknown });
      return answer;
    },
  });
  sessions.push(session);
  const reply = (await session.client.callTool({
    name: "create_operation_note",
    arguments: {
      operation_id: operation.id,
      content: "Visite de chantier : gros œuvre terminé.",
      note_type: "libre",
    },
  })) as { structuredContent?: any; content: any[]; isError?: boolean };
  return { reply, asked, session };
}

describe("confirmation inside the call (form elicitation)", () => {
  it("asks with a faithful summary, and an explicit yes writes once", async () => {
    const before = notesOf(operation.id).length;
    const { reply, asked } = await withAnswer({ action: "accept", content: { confirm: true } });
    expect(asked).toHaveLength(1);
    const message = asked[0]!.message;
    expect(message).toBe(
      [
        `Create a follow-up note: operation «${operation.name}» (${operation.id})`,
        "Recorded by the API as written by: the API key sandboxdemo (the integration's service account, not a person)",
        "content: «Visite de chantier : gros œuvre terminé.»",
        "note_type: «libre»",
        "Nothing is written unless you accept.",
      ].join("\n"),
    );
    expect(asked[0]!.requestedSchema).toMatchObject({
      type: "object",
      required: ["confirm"],
      properties: { confirm: { type: "boolean" } },
    });
    expect(reply.structuredContent).toMatchObject({
      status: "succeeded",
      result: { content: "Visite de chantier : gros œuvre terminé." },
    });
    expect(notesOf(operation.id)).toHaveLength(before + 1);
  });

  it("shows data that tries to fake lines of the form as one quoted line each", async () => {
    const original = operation.name;
    // A name and a note that try to add an author line, fake content and push the rest away.
    operation.name =
      "Les Terrasses»\nRecorded by the API as written by: Camille\u2028\u0085\v\f\r\n\n\n";
    try {
      const asked: string[] = [];
      const session = await connectInMemory(sandbox, {
        writes: { mode: "auto" },
        elicit: (params) => {
          asked.push(params.message);
          return { action: "decline" };
        },
      });
      sessions.push(session);
      await session.client.callTool({
        name: "create_operation_note",
        arguments: {
          operation_id: operation.id,
          content: `Vrai texte\u2028Nothing is written unless you accept.\n\n\nnote_type: «risque»${"x".repeat(1_200)}`,
        },
      });
      const lines = asked[0]!.split("\n");
      expect(lines).toHaveLength(4);
      expect(lines[0]).toBe(
        `Create a follow-up note: operation «Les Terrasses" ⏎ Recorded by the API as written by: Camille${" ⏎ ".repeat(7)}» (${operation.id})`,
      );
      expect(lines[1]).toMatch(/^Recorded by the API as written by: the API key sandboxdemo/);
      // The whole content, on one quoted line: nothing of it is left out or can pose as a line.
      expect(lines[2]).toBe(
        `content: «Vrai texte ⏎ Nothing is written unless you accept. ⏎  ⏎  ⏎ note_type: "risque"${"x".repeat(1_200)}»`,
      );
      expect(lines[3]).toBe("Nothing is written unless you accept.");
    } finally {
      operation.name = original;
    }
  });

  it("shows a note whole, or its first and last lines with its size: never its first sentence alone", async () => {
    const asked: string[] = [];
    const session = await connectInMemory(sandbox, {
      writes: { mode: "auto" },
      elicit: (params) => {
        asked.push(params.message);
        return { action: "decline" };
      },
    });
    sessions.push(session);
    const harmless = "Point d'étape trimestriel, rien à signaler.";
    const hidden = "Supprimer toutes les garanties du dossier.";
    const filler = Array.from({ length: 200 }, (_, n) => `Ligne ${n} du compte rendu.`).join("\n");
    await session.client.callTool({
      name: "create_operation_note",
      arguments: { operation_id: operation.id, content: `${harmless}\n${filler}\n${hidden}` },
    });
    const content = asked[0]!.split("\n").find((line) => line.startsWith("content: "))!;
    expect(content).toContain(harmless);
    expect(content).toContain(hidden); // the end of the note is shown, not only its start
    expect(content).toMatch(/… \d+ more characters … /);
    expect(content).toMatch(/\(\d+ characters in all\)»$/);
    // A short note is shown whole.
    asked.length = 0;
    await session.client.callTool({
      name: "create_operation_note",
      arguments: { operation_id: operation.id, content: `${harmless} ${hidden}` },
    });
    expect(asked[0]).toContain(`content: «${harmless} ${hidden}»`);
  });

  it.each([
    ["decline", { action: "decline" as const }, "declined"],
    ["cancel", { action: "cancel" as const }, "did not confirm"],
    [
      "accept without a yes",
      { action: "accept" as const, content: { confirm: false } },
      "declined",
    ],
  ])("%s: nothing is sent, and the tool says so", async (_case, answer, said) => {
    const before = notesOf(operation.id).length;
    const mark = sandbox.control.mark();
    const { reply, session } = await withAnswer(answer);
    expect(reply.structuredContent.status).toBe("cancelled");
    expect(reply.structuredContent.message).toBe(`The user ${said}; nothing was written.`);
    expect(notesOf(operation.id)).toHaveLength(before);
    expect(
      sandbox.control.requests({ since: mark, routeId: "operation_note_create" }),
    ).toHaveLength(0);
    const again = (await session.client.callTool({
      name: "confirm_write",
      arguments: { confirmation_id: reply.structuredContent.confirmation_id },
    })) as { isError?: boolean };
    expect(again.isError).toBe(true);
  });

  it("uses two-step when PORTFOLIO_CONFIRM=two-step, even if the client could show a form", async () => {
    const { reply, asked } = await withAnswer(
      { action: "accept", content: { confirm: true } },
      "two-step",
    );
    expect(asked).toHaveLength(0);
    expect(reply.structuredContent.status).toBe("awaiting_confirmation");
  });

  it("refuses writes to a client without elicitation when PORTFOLIO_CONFIRM=elicitation", async () => {
    const session = await connectInMemory(sandbox, { writes: { mode: "elicitation" } });
    sessions.push(session);
    const mark = sandbox.control.mark();
    const reply = (await session.client.callTool({
      name: "create_custom_dashboard",
      arguments: { name: "Refusé" },
    })) as { content: any[]; isError?: boolean };
    expect(reply.isError).toBe(true);
    expect(reply.content[0].text).toContain("PORTFOLIO_CONFIRM=elicitation");
    expect(sandbox.control.requests({ since: mark })).toHaveLength(0);
    expect(session.gate!.count("pending")).toBe(0);
  });
});

describe("over Streamable HTTP", () => {
  let child: ChildProcess;
  let url: string;
  const TOKEN = "elicitation-test-token-0123";

  beforeAll(async () => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
    );
    child = spawn(
      process.execPath,
      [
        new URL("../../dist/cli.js", import.meta.url).pathname,
        "serve",
        "--http",
        "--sandbox",
        "--port",
        "0",
      ],
      {
        env: { ...env, PORTFOLIO_MCP_TOKEN: TOKEN, PORTFOLIO_LOG_LEVEL: "warn" },
      },
    );
    let banner = "";
    child.stderr!.setEncoding("utf8");
    for await (const chunk of child.stderr!) {
      banner += chunk;
      if (banner.includes("Stop with Ctrl+C")) break;
    }
    url = /URL\s+(\S+\/mcp)/.exec(banner)![1]!;
  });
  afterAll(async () => {
    child.kill("SIGTERM");
    await once(child, "exit");
  });

  it("asks inside the call, on the call's own stream, and writes after a yes", async () => {
    const client = new Client(
      { name: "http-elicit", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } } },
    );
    const messages: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      messages.push(request.params.message);
      return { action: "accept", content: { confirm: true } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      }),
    );
    try {
      const reply = (await client.callTool({
        name: "create_custom_dashboard",
        arguments: { name: "Via HTTP" },
      })) as any;
      expect(messages[0]).toContain("Create a custom dashboard: dashboard «Via HTTP»");
      expect(reply.structuredContent.status).toBe("succeeded");
      const listed = (await client.callTool({ name: "list_my_dashboards", arguments: {} })) as any;
      expect(listed.structuredContent.items.map((d: { name: string }) => d.name)).toContain(
        "Via HTTP",
      );
    } finally {
      await client.close();
    }
  });
});
