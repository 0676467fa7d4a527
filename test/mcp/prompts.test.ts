import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory } from "../helpers/mcp.js";

let sandbox: Sandbox;
let mcp: Awaited<ReturnType<typeof connectInMemory>>;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  mcp = await connectInMemory(sandbox);
});
afterAll(async () => {
  await mcp.close();
  await sandbox.close();
});

describe("prompts", () => {
  it("lists portfolio_review and operation_brief with their arguments", async () => {
    const { prompts } = await mcp.client.listPrompts();
    expect(prompts.map((p) => [p.name, p.arguments?.map((a) => [a.name, a.required])])).toEqual([
      ["portfolio_review", [["spv_id", false]]],
      ["operation_brief", [["operation_id", true]]],
    ]);
  });

  it("renders a portfolio review, for the whole book or one SPV", async () => {
    const whole = await mcp.client.getPrompt({ name: "portfolio_review" });
    const text = (whole.messages[0]!.content as { text: string }).text;
    expect(text).toContain("get_portfolio_overview");
    expect(text).toContain("status=active");
    const spv = sandbox.control.state.data.spvs[0]!;
    const one = await mcp.client.getPrompt({
      name: "portfolio_review",
      arguments: { spv_id: spv.id },
    });
    expect((one.messages[0]!.content as { text: string }).text).toContain(`spv_id=${spv.id}`);
    await expect(
      mcp.client.getPrompt({ name: "portfolio_review", arguments: { spv_id: "x" } }),
    ).rejects.toThrow(
      /^MCP error -32602: portfolio_review was not rendered: spv_id must be a UUID/,
    );
  });

  it("renders an operation brief with the operation and its notes embedded", async () => {
    const operation = sandbox.control.state.data.operations[0]!;
    const brief = await mcp.client.getPrompt({
      name: "operation_brief",
      arguments: { operation_id: operation.id },
    });
    expect(brief.description).toContain(operation.name);
    const [detail, notes, ask] = brief.messages.map((m) => m.content as any);
    expect(JSON.parse(detail.resource.text).id).toBe(operation.id);
    expect(notes.resource.uri).toBe(`portfolio://operations/${operation.id}/notes`);
    expect(ask.text).toContain(operation.name);
    await expect(mcp.client.getPrompt({ name: "operation_brief" })).rejects.toThrow(
      /operation_brief was not rendered: operation_id is required/,
    );
    await expect(
      mcp.client.getPrompt({
        name: "operation_brief",
        arguments: { operation_id: "00000000-0000-4000-8000-000000000000" },
      }),
    ).rejects.toThrow(/Not found/);
  });

  it("completes prompt arguments", async () => {
    const operation = sandbox.control.state.data.operations[5]!;
    const { completion } = await mcp.client.complete({
      ref: { type: "ref/prompt", name: "operation_brief" },
      argument: { name: "operation_id", value: operation.name.slice(0, 10) },
    });
    expect(completion.values).toContain(operation.id);
    const spvs = await mcp.client.complete({
      ref: { type: "ref/prompt", name: "portfolio_review" },
      argument: { name: "spv_id", value: "" },
    });
    expect(spvs.completion.values).toHaveLength(12);
  });
});
