import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractRoutes } from "./helpers/api.js";
import { connectInMemory } from "./helpers/mcp.js";

/**
 * Hostile arguments for every tool: random and huge strings, control characters, path
 * traversal in ids, wrong types, extra fields. Every call must end in a clear error or a valid
 * result; nothing invalid may reach the API; no secret may come back.
 */
let sandbox: Sandbox;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;
let tools: Array<{ name: string; inputSchema: { properties?: Record<string, unknown> } }>;

const NASTY = [
  "../../etc/passwd",
  "..%2F..%2Fdeals",
  "%2e%2e/%2e%2e/users/me",
  "00000000-0000-4000-8000-000000000000/../../deals",
  "5ced923a-d6bb-4559-8481-29af260cd031%00",
  "\u0000\u0001\u0002\u001b[2J",
  "line\nbreak\r\nX-Injected: yes",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "🏢".repeat(200),
  "x".repeat(100_000),
  "",
  " ",
];

const value: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...NASTY),
  fc.string(),
  fc.string({ unit: "binary", maxLength: 64 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 60 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 30 }),
);

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  mcp = await connectInMemory(sandbox, { writes: {} });
  tools = (await mcp.client.listTools()).tools as typeof tools;
});
afterAll(async () => {
  await mcp.close();
  await sandbox.close();
});

describe("hostile input", () => {
  it("never crashes, never sends an invalid request, never leaks a secret", async () => {
    const mark = sandbox.control.mark();
    const ids = [
      sandbox.control.state.data.operations[0]!.id,
      sandbox.control.state.data.deals[0]!.id,
    ];
    const replies: string[] = [];
    for (const tool of tools) {
      const known = Object.keys(tool.inputSchema.properties ?? {});
      const args = fc.dictionary(
        known.length > 0
          ? fc.oneof(fc.constantFrom(...known), fc.string({ maxLength: 12 }))
          : fc.string({ maxLength: 12 }),
        fc.oneof(value, fc.constantFrom(...ids)),
        { maxKeys: 6 },
      );
      await fc.assert(
        fc.asyncProperty(args, async (input) => {
          const reply = (await mcp.client.callTool({ name: tool.name, arguments: input })) as {
            content: Array<{ type: string; text?: string }>;
            structuredContent?: unknown;
            isError?: boolean;
          };
          const text = reply.content.map((c) => c.text ?? "").join("\n");
          replies.push(text);
          if (reply.isError) {
            expect(text.length, tool.name).toBeGreaterThan(0);
            expect(text, tool.name).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/); // no stack trace
            expect(text.length, `${tool.name}: an error is a sentence, not a dump`).toBeLessThan(
              4_000,
            );
          } else {
            expect(reply.structuredContent, tool.name).toBeDefined();
          }
        }),
        { numRuns: 40, seed: Number(process.env.FC_SEED ?? 20261121) },
      );
    }

    // Nothing invalid reached the API: every request hit a route, no path escaped its
    // segment, and the only upstream validation refusals are the ones the server cannot
    // know in advance (a status code absent from the entity's taxonomy).
    const sent = sandbox.control.requests({ since: mark });
    expect(sent.length).toBeGreaterThan(50);
    for (const entry of sent) {
      expect(entry.routeId, entry.path).not.toBeNull();
      expect(entry.path).not.toMatch(/\/\.\.?(\/|$)/);
      if (entry.status === 422) {
        expect(`${entry.routeId} ${JSON.stringify(entry.query)}`).toMatch(
          /^operations_list .*"status"/,
        );
      }
      expect([413, 415]).not.toContain(entry.status);
    }

    const bearers = new Set(sent.map((e) => e.headers.authorization?.slice(7)).filter(Boolean));
    const all = replies.join("\n");
    expect(all).not.toContain(sandbox.credentials.secret);
    for (const bearer of bearers) expect(all).not.toContain(bearer as string);
    expect(all).not.toContain("shr_");

    // And the server still answers normally.
    const after = (await mcp.client.callTool({ name: "list_spvs", arguments: {} })) as {
      isError?: boolean;
    };
    expect(after.isError).toBeFalsy();
  }, 120_000);

  it("through the generic tools, reaches only real routes with arguments the contract allows", async () => {
    const longTail = await connectInMemory(sandbox, {
      writes: { mode: "two-step" },
      contract: true,
    });
    const ids = [
      sandbox.control.state.data.operations[0]!.id,
      sandbox.control.state.data.alerts[0]!.id,
      sandbox.control.state.data.documents[0]!.id,
    ];
    try {
      const routes = [...(await contractRoutes(sandbox)).values()];
      const names = (where: "pathParameters" | "queryParameters") => [
        ...new Set(routes.flatMap((op) => (op.contract?.[where] ?? []).map((p) => p.name))),
      ];
      // Hostile values, and real-looking ones often enough that some calls pass validation.
      const real = fc.oneof(value, fc.uuid(), fc.constantFrom(...ids));
      const part = (keys: string[]) =>
        fc.oneof(
          fc.constant({}),
          fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 12 })), real, {
            maxKeys: 3,
          }),
        );
      const args = fc.record(
        {
          operation: fc.oneof(
            fc.constantFrom(...routes.map((op) => op.id)),
            fc.constantFrom(...NASTY),
          ),
          path: part(names("pathParameters")),
          query: part(names("queryParameters")),
          body: fc.oneof(value, part(["name", "title", "comment", "status", "until"])),
        },
        { requiredKeys: ["operation"] },
      );
      const mark = sandbox.control.mark();
      const replies: string[] = [];
      for (const tool of ["call_api_read", "draft_api_write", "find_api_operations"]) {
        await fc.assert(
          fc.asyncProperty(args, async (input) => {
            const reply = (await longTail.client.callTool({
              name: tool,
              arguments: tool === "find_api_operations" ? { query: input.operation } : input,
            })) as { content: Array<{ text?: string }>; isError?: boolean };
            const text = reply.content.map((c) => c.text ?? "").join("\n");
            replies.push(text);
            if (reply.isError) {
              expect(text, tool).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/);
              expect(text.length, tool).toBeLessThan(4_000);
            }
          }),
          { numRuns: 120, seed: Number(process.env.FC_SEED ?? 20261123) },
        );
      }
      // Drafts send nothing; reads and preview lookups hit real routes, never a write, never a
      // path outside its segment.
      const sent = sandbox.control
        .requests({ since: mark })
        .filter((e) => e.routeId !== "auth_token");
      expect(sent.length, "some hostile calls were valid enough to be sent").toBeGreaterThan(3);
      for (const entry of sent) {
        expect(entry.routeId, entry.path).not.toBeNull();
        expect(entry.method, `${entry.routeId} was sent by a read or a draft`).not.toBe("DELETE");
        expect(entry.path).not.toMatch(/\/\.\.?(\/|$)/);
        expect([413, 415]).not.toContain(entry.status);
      }
      expect(replies.join("\n")).not.toContain(sandbox.credentials.secret);
    } finally {
      await longTail.close();
    }
  }, 120_000);
});
