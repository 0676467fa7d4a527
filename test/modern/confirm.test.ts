import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connectModern } from "../helpers/modern.js";

/**
 * Confirmation without a session (MCP 2026-07-28): the write tool answers input_required with
 * the form and a sealed request state; the client's retry with the person's answer delivers
 * the stored intent once. The sandbox's request log is the witness: one POST, or none.
 */
let sandbox: Sandbox;
const opened: Array<{ close(): Promise<void> }> = [];
const open = async (options: Parameters<typeof connectModern>[1] = {}) => {
  const session = await connectModern(sandbox, { elicitation: true, ...options });
  opened.push(session);
  return session;
};

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});
afterAll(() => sandbox.close());

const posts = (mark: number, name: string) =>
  sandbox.control
    .requests({ since: mark, routeId: "custom_dashboard_create" })
    .filter((e) => (e.body as { name?: string }).name === name);
const yes = { confirm: { action: "accept", content: { confirm: true } } };

async function drafted(session: Awaited<ReturnType<typeof open>>, name: string) {
  const first = (await session.call("create_custom_dashboard", { name })) as any;
  expect(first.resultType).toBe("input_required");
  expect(first.inputRequests.confirm).toMatchObject({
    method: "elicitation/create",
    params: {
      mode: "form",
      message: expect.stringContaining(`Create a custom dashboard: dashboard «${name}»`),
    },
  });
  return first.requestState as string;
}

const refusal = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as { code: number; message: string };
  }
  throw new Error("expected a refusal");
};

describe("confirmation in an input-required round trip (2026-07-28)", () => {
  it("delivers the write once on an accepting answer, through the client's own form", async () => {
    const asked: string[] = [];
    const session = await open({
      answer: (message) => {
        asked.push(message);
        return { action: "accept", content: { confirm: true } };
      },
    });
    const mark = sandbox.control.mark();
    const reply = (await session.client.callTool({
      name: "create_custom_dashboard",
      arguments: { name: "Moderne accepté" },
    })) as any;
    expect(reply.structuredContent.status).toBe("succeeded");
    expect(asked[0]).toContain(
      "Recorded by the API as written by: camille.martin@aurore-capital.example",
    );
    expect(posts(mark, "Moderne accepté")).toHaveLength(1);
  });

  it("cancels on a declining answer and sends nothing", async () => {
    const session = await open();
    const mark = sandbox.control.mark();
    const state = await drafted(session, "Moderne refusé");
    const reply = (await session.call(
      "create_custom_dashboard",
      { name: "Moderne refusé" },
      { requestState: state, inputResponses: { confirm: { action: "decline" } } },
    )) as any;
    expect(reply.structuredContent).toMatchObject({
      status: "cancelled",
      message: "The user declined; nothing was written.",
    });
    expect(posts(mark, "Moderne refusé")).toHaveLength(0);
  });

  it("asks again when the retry carries no answer", async () => {
    const session = await open();
    const state = await drafted(session, "Sans réponse");
    const again = (await session.call(
      "create_custom_dashboard",
      { name: "Sans réponse" },
      { requestState: state },
    )) as any;
    expect(again.resultType).toBe("input_required");
    expect(again.requestState).toBe(state);
  });

  it("refuses a tampered, changed, foreign or expired state, sending nothing; a repeat hears the outcome", async () => {
    const session = await open();
    const mark = sandbox.control.mark();
    const name = "Moderne contrôlé";
    const state = await drafted(session, name);
    const retry = (s: string, args: Record<string, unknown>, via = session) =>
      refusal(via.call("create_custom_dashboard", args, { requestState: s, inputResponses: yes }));
    const sentence = (why: string) =>
      `The confirmation of create_custom_dashboard cannot be used: ${why}; nothing was sent. Call create_custom_dashboard again to draft the write anew.`;

    const flipped = `${state.slice(0, -3)}${state.at(-3) === "A" ? "B" : "A"}${state.slice(-2)}`;
    expect(await retry(flipped, { name })).toMatchObject({
      code: -32602,
      message: expect.stringContaining(sentence("it was altered, or sealed with another key")),
    });
    expect((await retry(state, { name: "Autre nom" })).message).toContain(
      sentence("the arguments differ from those of the write the person was shown"),
    );
    const other = await open({ client: "http:someone-else", shared: session.shared });
    expect((await retry(state, { name }, other)).message).toContain(
      sentence("it was issued to another user or client"),
    );
    expect(posts(mark, name)).toHaveLength(0);

    // The genuine answer is delivered once. A client that lost that answer and sends it again
    // hears the write's recorded outcome (never "nothing was sent": it was), and nothing is
    // sent twice; following the old advice to draft anew wrote the record twice.
    const answer = () =>
      session.call(
        "create_custom_dashboard",
        { name },
        { requestState: state, inputResponses: yes },
      );
    const done = (await answer()) as any;
    expect(done.structuredContent.status).toBe("succeeded");
    const repeated = (await answer()) as any;
    expect(repeated.isError).toBeFalsy();
    expect(repeated.structuredContent).toMatchObject({
      status: "succeeded",
      result: { name },
      confirmation_id: done.structuredContent.confirmation_id,
    });
    expect(JSON.stringify(repeated)).not.toContain("nothing was sent");
    expect(posts(mark, name)).toHaveLength(1);

    const late = await drafted(session, "Trop tard");
    session.shared.now.ms = Date.now() + 16 * 60_000; // past the 15-minute confirmation window
    expect((await retry(late, { name: "Trop tard" })).message).toContain(
      sentence("it has expired"),
    );
    session.shared.now.ms = null;
    expect(posts(mark, "Trop tard")).toHaveLength(0);
  });

  it("works across replicas that share the state directory: drafted on one, confirmed on another", async () => {
    const first = await open();
    const name = "D'une réplique à l'autre";
    const state = await drafted(first, name);
    // Another process: its own gate and sealer, on the same directory (journal and key).
    const second = await open({ shared: { stateDir: first.shared.stateDir, now: { ms: null } } });
    const mark = sandbox.control.mark();
    const done = (await second.call(
      "create_custom_dashboard",
      { name },
      {
        requestState: state,
        inputResponses: yes,
      },
    )) as any;
    expect(done.structuredContent.status).toBe("succeeded");
    expect(posts(mark, name)).toHaveLength(1);
  });

  it("falls back to two steps for a 2026 client without form elicitation", async () => {
    const session = await open({ elicitation: false });
    const reply = (await session.client.callTool({
      name: "create_custom_dashboard",
      arguments: { name: "Sans formulaire" },
    })) as any;
    expect(reply.structuredContent.status).toBe("awaiting_confirmation");
    const done = (await session.client.callTool({
      name: "confirm_write",
      arguments: { confirmation_id: reply.structuredContent.confirmation_id },
    })) as any;
    expect(done.structuredContent.status).toBe("succeeded");
  });
});
