import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connectInMemory } from "../helpers/mcp.js";
import { connectModern } from "../helpers/modern.js";

/**
 * The MCP Apps confirmation card at the protocol level (the browser test drives the card
 * itself): which tools each kind of client is offered, what a draft carries for the card, and
 * that only the card's token, once, for its own draft, sends anything. The sandbox's request
 * log is the witness.
 */
let sandbox: Sandbox;
const opened: Array<{ close(): Promise<void> }> = [];
const track = <T extends { close(): Promise<void> }>(session: T) => {
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

const CARD = "ui://portfolio/confirm-write.html";
const created = (mark: number, name: string) =>
  sandbox.control
    .requests({ since: mark, routeId: "custom_dashboard_create" })
    .filter((e) => (e.body as { name?: string }).name === name);

const refusal = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as { code: number; message: string };
  }
  throw new Error("expected a refusal");
};

type Result = {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, any>;
  _meta?: Record<string, any>;
};

/** The card's token: in the result's _meta, for the view; never where the model reads. */
const tokenOf = (reply: Result) => reply._meta?.["portfolio-mcp/app_confirmation"]?.token as string;

async function draft(
  session: { client: { callTool(params: object): Promise<unknown> } },
  name: string,
) {
  const reply = (await session.client.callTool({
    name: "create_custom_dashboard",
    arguments: { name },
  })) as Result;
  expect(reply.isError).toBeFalsy();
  return reply;
}

describe("a client that renders MCP Apps and cannot show a form (2026-07-28)", () => {
  it("is offered the card's buttons as app-only tools, and no confirm_write", async () => {
    const session = track(await connectModern(sandbox, { apps: true }));
    const { tools } = await session.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).not.toContain("confirm_write");
    expect(names).not.toContain("cancel_write");
    for (const name of ["app_confirm_write", "app_cancel_write"]) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?._meta?.ui, name).toEqual({ resourceUri: CARD, visibility: ["app"] });
    }
    // Every write tool is shown in the card; the two views on their tools.
    const writes = tools.filter((t) => t.annotations?.readOnlyHint === false);
    expect(writes.length).toBeGreaterThan(5);
    for (const tool of writes)
      expect((tool._meta?.ui as { resourceUri?: string })?.resourceUri, tool.name).toBe(CARD);
    const viewOf = (name: string) =>
      (tools.find((t) => t.name === name)?._meta?.ui as { resourceUri?: string })?.resourceUri;
    expect(viewOf("get_portfolio_overview")).toBe("ui://portfolio/overview.html");
    expect(viewOf("get_operation")).toBe("ui://portfolio/operation.html");
    expect(viewOf("list_operations")).toBeUndefined();
  });

  it("drafts with a token for the card only; Confirm sends once, and never again", async () => {
    const session = track(await connectModern(sandbox, { apps: true }));
    const mark = sandbox.control.mark();
    const reply = await draft(session, "Carte confirmée");
    const outcome = reply.structuredContent!;
    expect(outcome.status).toBe("awaiting_confirmation");
    expect(outcome.preview.action).toBe("Create a custom dashboard");
    expect(outcome.message).toContain("card");
    const token = tokenOf(reply);
    expect(token).toMatch(/^s1\./);
    // Nothing a host may give the model carries it: neither the text nor the structured content.
    expect(reply.content.map((c) => c.text).join("")).not.toContain(token);
    expect(JSON.stringify(reply.structuredContent)).not.toContain(token);
    expect(JSON.stringify(reply.structuredContent)).not.toContain("app_confirmation");
    const { tools } = await session.client.listTools();
    const schema = tools.find((t) => t.name === "create_custom_dashboard")?.outputSchema;
    expect(JSON.stringify(schema)).not.toContain("app_confirmation");
    expect(created(mark, "Carte confirmée")).toHaveLength(0);

    // The model cannot settle it: confirm_write is not offered to this client.
    const model = await refusal(
      session.client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: outcome.confirmation_id },
      }),
    );
    expect(model.message).toContain("confirms writes in the card");
    expect(created(mark, "Carte confirmée")).toHaveLength(0);

    const confirmed = (await session.client.callTool({
      name: "app_confirm_write",
      arguments: { token },
    })) as Result;
    expect(confirmed.structuredContent?.status).toBe("succeeded");
    expect(confirmed.structuredContent?.result?.name).toBe("Carte confirmée");
    expect(created(mark, "Carte confirmée")).toHaveLength(1);

    // Pressed again (a lost answer): the recorded outcome, and nothing sent twice.
    const again = (await session.client.callTool({
      name: "app_confirm_write",
      arguments: { token },
    })) as Result;
    expect(again.structuredContent?.status).toBe("succeeded");
    expect(again.structuredContent?.result?.name).toBe("Carte confirmée");
    expect(created(mark, "Carte confirmée")).toHaveLength(1);
  });

  it("is decided only in the card: confirm_write from another session of the client sends nothing", async () => {
    const session = track(await connectModern(sandbox, { apps: true }));
    // The same client (and user) again, without the Apps extension: it is offered confirm_write.
    const chat = track(await connectModern(sandbox, { shared: session.shared }));
    const mark = sandbox.control.mark();
    const drafted = await draft(session, "Carte seulement");
    const byId = (await chat.client.callTool({
      name: "confirm_write",
      arguments: { confirmation_id: drafted.structuredContent!.confirmation_id },
    })) as Result;
    expect(byId.isError).toBe(true);
    expect(byId.content[0]?.text).toContain(
      "waits for the person's answer in the confirmation card shown with the draft, and only there can it be confirmed or cancelled; this call sent nothing",
    );
    const cancelled = (await chat.client.callTool({
      name: "cancel_write",
      arguments: { confirmation_id: drafted.structuredContent!.confirmation_id },
    })) as Result;
    expect(cancelled.isError).toBe(true);
    expect(created(mark, "Carte seulement")).toHaveLength(0);
    // The card's own button still decides it.
    const pressed = (await session.client.callTool({
      name: "app_confirm_write",
      arguments: { token: tokenOf(drafted) },
    })) as Result;
    expect(pressed.structuredContent?.status).toBe("succeeded");
    expect(created(mark, "Carte seulement")).toHaveLength(1);
  });

  it("Cancel sends nothing, and the token then confirms nothing", async () => {
    const session = track(await connectModern(sandbox, { apps: true }));
    const mark = sandbox.control.mark();
    const token = tokenOf(await draft(session, "Carte annulée"));
    const cancelled = (await session.client.callTool({
      name: "app_cancel_write",
      arguments: { token },
    })) as Result;
    expect(cancelled.structuredContent?.status).toBe("cancelled");
    const late = (await session.client.callTool({
      name: "app_confirm_write",
      arguments: { token },
    })) as Result;
    expect(late.isError).toBe(true);
    expect(created(mark, "Carte annulée")).toHaveLength(0);
  });

  it("refuses a token that is expired, altered, another client's, or not a card's", async () => {
    const session = track(await connectModern(sandbox, { apps: true }));
    const other = track(
      await connectModern(sandbox, {
        apps: true,
        client: "http:someone-else",
        shared: session.shared,
      }),
    );
    const mark = sandbox.control.mark();
    const token = tokenOf(await draft(session, "Carte gardée"));
    const tryWith = async (who: typeof session, t: string) =>
      (await who.client.callTool({ name: "app_confirm_write", arguments: { token: t } })) as Result;

    const foreign = await tryWith(other, token);
    expect(foreign.content[0]?.text).toContain("issued to another user or client");
    const altered = await tryWith(session, `${token.slice(0, -4)}AAAA`);
    expect(altered.content[0]?.text).toContain("altered");
    // An input-required request state is sealed with the same key, but is not a card's token.
    const formClient = track(
      await connectModern(sandbox, { elicitation: true, shared: session.shared }),
    );
    const asked = (await formClient.call("create_custom_dashboard", {
      name: "Carte formulaire",
    })) as unknown as { requestState: string };
    const state = await tryWith(session, asked.requestState);
    expect(state.content[0]?.text).toMatch(
      /not a confirmation card's token|another user or client/,
    );

    session.shared.now.ms = Date.now() + 16 * 60_000; // past the 15-minute draft
    const expired = await tryWith(session, token);
    expect(expired.content[0]?.text).toContain("the draft has expired");
    expect(created(mark, "Carte gardée")).toHaveLength(0);
    expect(created(mark, "Carte formulaire")).toHaveLength(0);
  });
});

describe("clients that do not confirm in a card", () => {
  it("a client without the extension: two-step as before, no views, no card buttons", async () => {
    const session = track(await connectModern(sandbox));
    const { tools } = await session.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain("confirm_write");
    expect(names).not.toContain("app_confirm_write");
    expect(tools.filter((t) => t._meta?.ui)).toEqual([]);
    const reply = await draft(session, "Deux temps");
    expect(tokenOf(reply)).toBeUndefined();
    const button = await refusal(
      session.client.callTool({ name: "app_confirm_write", arguments: { token: "s1.x" } }),
    );
    expect(button.message).toContain("confirmation card");
    const { resources } = await session.client.listResources();
    expect(resources.filter((r) => r.uri.startsWith("ui://"))).toEqual([]);
  });

  it("a client with a form and the extension confirms in its form; the card shows the outcome", async () => {
    const session = track(
      await connectModern(sandbox, {
        apps: true,
        elicitation: true,
        answer: () => ({ action: "accept", content: { confirm: true } }),
      }),
    );
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toContain("confirm_write");
    expect(tools.map((t) => t.name)).not.toContain("app_confirm_write");
    const mark = sandbox.control.mark();
    const reply = await draft(session, "Formulaire et carte");
    expect(reply.structuredContent?.status).toBe("succeeded");
    expect(created(mark, "Formulaire et carte")).toHaveLength(1);
  });

  it("PORTFOLIO_CONFIRM=app refuses a client without the extension before drafting", async () => {
    const session = track(await connectModern(sandbox, { mode: "app" }));
    const mark = sandbox.control.mark();
    const reply = (await session.client.callTool({
      name: "create_custom_dashboard",
      arguments: { name: "Sans carte" },
    })) as Result;
    expect(reply.isError).toBe(true);
    expect(reply.content[0]?.text).toBe(
      "This server confirms writes only in an MCP Apps card (PORTFOLIO_CONFIRM=app), and this client can show none; nothing was drafted.",
    );
    expect(created(mark, "Sans carte")).toHaveLength(0);
  });

  it("PORTFOLIO_CONFIRM=form,app (no two-step) refuses a client with neither", async () => {
    const session = track(await connectModern(sandbox, { mode: ["form", "app"] }));
    const reply = (await session.client.callTool({
      name: "create_custom_dashboard",
      arguments: { name: "Ni l'un ni l'autre" },
    })) as Result;
    expect(reply.content[0]?.text).toContain(
      "only in a confirmation form or an MCP Apps card (PORTFOLIO_CONFIRM=form,app), and this client can show neither",
    );
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).not.toContain("app_confirm_write");
  });

  it("PORTFOLIO_CONFIRM=form,app neither lists nor accepts confirm_write, for any client", async () => {
    const session = track(
      await connectModern(sandbox, {
        mode: ["form", "app"],
        elicitation: true,
        answer: () => ({ action: "accept", content: { confirm: true } }),
      }),
    );
    const { tools } = await session.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).not.toContain("confirm_write");
    expect(names).not.toContain("cancel_write");
    expect(names).toContain("create_custom_dashboard");
    const mark = sandbox.control.mark();
    for (const name of ["confirm_write", "cancel_write"]) {
      const refused = await refusal(
        session.client.callTool({ name, arguments: { confirmation_id: "x [cf_aaaaaaaaaaaa]" } }),
      );
      expect(refused.message).toContain("PORTFOLIO_CONFIRM leaves two-step out");
    }
    expect(sandbox.control.requests({ since: mark })).toEqual([]);
  });

  it("PORTFOLIO_CONFIRM=two-step keeps a card-capable client on confirm_write", async () => {
    const session = track(await connectModern(sandbox, { apps: true, mode: "two-step" }));
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toContain("confirm_write");
    expect(tools.map((t) => t.name)).not.toContain("app_confirm_write");
    const writeViews = tools.filter(
      (t) => t.annotations?.readOnlyHint === false && t._meta?.ui !== undefined,
    );
    expect(writeViews).toEqual([]);
  });
});

describe("a 2025-era session that renders MCP Apps", () => {
  it("confirms in the card too, and lists and serves the card as a self-contained page", async () => {
    const session = track(
      await connectInMemory(sandbox, { apps: true, writes: {}, contract: true }),
    );
    const { tools } = await session.client.listTools();
    // The long tail's draft tool is shown in the card like the curated ones.
    expect(tools.find((t) => t.name === "draft_api_write")?._meta?.ui).toEqual({
      resourceUri: "ui://portfolio/confirm-write.html",
    });
    expect(tools.map((t) => t.name)).toContain("app_confirm_write");
    expect(tools.map((t) => t.name)).not.toContain("confirm_write");
    const mark = sandbox.control.mark();
    const token = tokenOf(await draft(session, "Carte 2025"));
    const done = (await session.client.callTool({
      name: "app_confirm_write",
      arguments: { token },
    })) as Result;
    expect(done.structuredContent?.status).toBe("succeeded");
    expect(created(mark, "Carte 2025")).toHaveLength(1);

    const { resources } = await session.client.listResources();
    const views = resources.filter((r) => r.uri.startsWith("ui://"));
    expect(views.map((r) => r.uri).sort()).toEqual([
      "ui://portfolio/confirm-write.html",
      "ui://portfolio/operation.html",
      "ui://portfolio/overview.html",
    ]);
    for (const view of views) {
      const read = await session.client.readResource({ uri: view.uri });
      const [page] = read.contents as Array<{ mimeType: string; text: string; _meta?: any }>;
      expect(page?.mimeType).toBe("text/html;profile=mcp-app");
      expect(page?._meta?.ui?.csp).toEqual({
        connectDomains: [],
        resourceDomains: [],
        frameDomains: [],
      });
      // Self-contained: one inline script and one inline style, nothing fetched (the browser
      // test runs the views under a CSP that forbids any fetch).
      const html = page?.text ?? "";
      const [, style = ""] = /<style>([\s\S]*?)<\/style>/.exec(html) ?? [];
      const markup = html
        .replace(/<script>[\s\S]*?<\/script>/g, "")
        .replace(/<style>[\s\S]*?<\/style>/g, "");
      expect(html.match(/<script/g)?.length).toBe(1);
      expect(/(src|href)=/i.test(markup), "markup loads nothing").toBe(false);
      expect(/@import|url\(/i.test(style), "the style loads nothing").toBe(false);
    }
  });
});
