import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import type { Browser, FrameLocator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HAVE_BROWSER, hostPage, launchChromium } from "../helpers/browser.js";
import { connectModern } from "../helpers/modern.js";

/**
 * The MCP Apps views in a real browser (Debian's Chromium), inside a minimal host built on the
 * ext-apps AppBridge, talking to the real server through the SDK's 2026-07-28 client that
 * declares the Apps extension and no elicitation. The sandbox's request log is the witness of
 * what was sent; screenshots go to build/screenshots/.
 */
const SHOTS = join(import.meta.dirname, "..", "..", "build", "screenshots");
const CARD = "ui://portfolio/confirm-write.html";

let sandbox: Sandbox;
let browser: Browser;
let host: string;
let session: Awaited<ReturnType<typeof connectModern>>;
let page: Page;
const reports: Array<{ content?: Array<{ text?: string }> }> = [];
const consoleErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  sandbox = await startSandbox({ rateLimit: false });
  session = await connectModern(sandbox, { apps: true });
  [browser, host] = await Promise.all([launchChromium(), hostPage()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await session?.close();
  await sandbox?.close();
});

async function newPage(width = 640): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: width + 40, height: 720 } });
  const opened = await context.newPage();
  opened.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
  opened.on("pageerror", (error) => consoleErrors.push(`page error: ${error.message}`));
  await opened.exposeFunction("hostCallTool", (params: { name: string; arguments?: object }) =>
    session.client.callTool(params as never),
  );
  await opened.exposeFunction("hostReport", (params: (typeof reports)[number]) => {
    reports.push(params);
  });
  await opened.setContent(host);
  return opened;
}
afterEach(async () => {
  await page?.context().close();
  session.shared.now.ms = null;
  expect(
    consoleErrors.filter((e) => /Content Security Policy|Refused to|page error/i.test(e)),
    "the views load nothing the CSP forbids, and throw nothing",
  ).toEqual([]);
  consoleErrors.length = 0;
});

async function viewHtml(uri: string): Promise<string> {
  const read = await session.client.readResource({ uri });
  return (read.contents[0] as { text: string }).text;
}

/** Renders a tool's result in its view, as a host does after the call. */
async function show(
  uri: string,
  toolArguments: object,
  toolResult: object,
  options: { theme?: "light" | "dark"; width?: number } = {},
): Promise<FrameLocator> {
  const html = await viewHtml(uri);
  // Runs in the page (test/apps/host/host.ts), where openView is defined.
  const openView = (o: unknown) =>
    (globalThis as unknown as { openView(o: unknown): Promise<void> }).openView(o);
  await page.evaluate(openView, {
    html,
    toolArguments,
    toolResult,
    theme: options.theme ?? "light",
    width: options.width ?? 640,
  });
  return page.frameLocator("iframe");
}

const created = (mark: number, name: string) =>
  sandbox.control
    .requests({ since: mark, routeId: "custom_dashboard_create" })
    .filter((e) => (e.body as { name?: string }).name === name);

async function drafted(name: string) {
  const args = { name, description: "Suivi hebdomadaire des LTV" };
  const result = (await session.client.callTool({
    name: "create_custom_dashboard",
    arguments: args,
  })) as { structuredContent: Record<string, any> };
  expect(result.structuredContent.status).toBe("awaiting_confirmation");
  return { args, result };
}

describe.skipIf(!HAVE_BROWSER)("the confirmation card in a browser", () => {
  it("shows the exact draft; Confirm sends it once; a second Confirm sends nothing", async () => {
    page = await newPage();
    // This client (the Apps extension, no form) has no way to confirm but the card's button:
    // the tools that settle drafts it is offered are app-only, and confirm_write is not one.
    const { tools } = await session.client.listTools();
    const settling = tools.filter((t) => /confirm|cancel/.test(t.name));
    expect(settling.map((t) => t.name).sort()).toEqual(["app_cancel_write", "app_confirm_write"]);
    for (const tool of settling) expect(tool._meta?.ui).toMatchObject({ visibility: ["app"] });
    const mark = sandbox.control.mark();
    const { args, result } = await drafted("Tableau carte");
    const card = await show(CARD, args, result);
    await expect.poll(() => card.locator("h1").textContent()).toBe("Create a custom dashboard");
    const text = (await card.locator("main").textContent()) ?? "";
    expect(text).toContain("dashboard «Tableau carte»");
    expect(text).toContain(
      "Recorded by the API as written by: camille.martin@aurore-capital.example",
    );
    expect(await card.locator("table.fields th").allTextContents()).toEqual([
      "name",
      "description",
    ]);
    expect(await card.locator("table.fields td").allTextContents()).toEqual([
      "Tableau carte",
      "Suivi hebdomadaire des LTV",
    ]);
    expect(text).toContain("Nothing is sent until you press Confirm");
    await page.screenshot({ path: join(SHOTS, "confirm-card.png") });
    expect(created(mark, "Tableau carte")).toHaveLength(0);

    await card.getByRole("button", { name: "Confirm" }).click();
    await expect
      .poll(() => card.locator(".status").textContent())
      .toMatch(/^Done: «Tableau carte» \(id /);
    expect(created(mark, "Tableau carte")).toHaveLength(1);
    expect(reports.at(-1)?.content?.[0]?.text).toContain(
      'The user pressed Confirm in the card for "Create a custom dashboard: dashboard «Tableau carte»"',
    );
    await page.screenshot({ path: join(SHOTS, "confirm-card-done.png") });

    // The host shows the same draft again (a reloaded conversation): Confirm sends nothing, and
    // the card tells what became of the write (it was written), never that nothing was sent.
    const again = await show(CARD, args, result);
    await again.getByRole("button", { name: "Confirm" }).click();
    await expect
      .poll(() => again.locator(".status").textContent())
      .toContain("Written, once. Confirming again returns this same result and sends nothing.");
    expect(created(mark, "Tableau carte")).toHaveLength(1);
  });

  it("Cancel sends nothing; Escape cancels; Enter confirms only on a focused Confirm", async () => {
    page = await newPage();
    const mark = sandbox.control.mark();
    const first = await drafted("Tableau annulé");
    let card = await show(CARD, first.args, first.result);
    await card.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => card.locator(".status").textContent()).toBe("Nothing was written.");

    const second = await drafted("Tableau échappé");
    card = await show(CARD, second.args, second.result);
    await card.locator("h1").click(); // the person is in the card
    await page.keyboard.press("Escape");
    await expect.poll(() => card.locator(".status").textContent()).toBe("Nothing was written.");

    const third = await drafted("Tableau entrée");
    card = await show(CARD, third.args, third.result);
    await card.locator("h1").click();
    await page.keyboard.press("Enter"); // nothing has the focus: Enter confirms nothing
    await card.getByRole("button", { name: "Cancel" }).focus();
    await page.keyboard.press("Tab"); // Cancel → Confirm
    expect(created(mark, "Tableau entrée")).toHaveLength(0);
    expect(await card.locator(".status").textContent()).toBe("");
    await page.keyboard.press("Enter");
    await expect.poll(() => card.locator(".status").textContent()).toMatch(/^Done:/);

    expect(created(mark, "Tableau annulé")).toHaveLength(0);
    expect(created(mark, "Tableau échappé")).toHaveLength(0);
    expect(created(mark, "Tableau entrée")).toHaveLength(1);
  });

  it("an expired draft cannot be confirmed, and the card says so", async () => {
    page = await newPage();
    const mark = sandbox.control.mark();
    const { args, result } = await drafted("Tableau expiré");
    // The server's clock first: past the draft's 15 minutes, a Confirm is refused.
    session.shared.now.ms = Date.now() + 16 * 60_000;
    let card = await show(CARD, args, result);
    await card.getByRole("button", { name: "Confirm" }).click();
    await expect
      .poll(() => card.locator(".status").textContent())
      .toContain("the draft has expired");
    // The card's own clock: once past the expiry, no button is left to press.
    await page.clock.install();
    card = await show(CARD, args, result);
    await card.locator("h1").waitFor();
    await page.clock.fastForward("16:00");
    await expect
      .poll(() => card.locator(".expiry").textContent())
      .toMatch(/^This draft expired at/);
    expect(await card.getByRole("button", { name: "Confirm" }).isVisible()).toBe(false);
    expect(created(mark, "Tableau expiré")).toHaveLength(0);
  });

  it("reads well in dark theme and at a phone's width", async () => {
    page = await newPage(360);
    const { args, result } = await drafted("Tableau sombre et étroit");
    const card = await show(CARD, args, result, { theme: "dark", width: 360 });
    await card.locator("h1").waitFor();
    // Runs in the card's document.
    const look = await card.locator("body").evaluate((body) => {
      const root = body.ownerDocument.documentElement;
      return {
        theme: root.dataset.theme,
        background: body.ownerDocument.defaultView?.getComputedStyle(body).backgroundColor,
        overflow: root.scrollWidth - root.clientWidth,
      };
    });
    expect(look.theme).toBe("dark");
    expect(look.background).not.toBe("rgb(255, 255, 255)");
    expect(look.overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, "confirm-card-dark-narrow.png") });
    await card.getByRole("button", { name: "Cancel" }).click();
  });
});

describe.skipIf(!HAVE_BROWSER)("the read views in a browser", () => {
  it("the overview renders the sandbox's figures, amounts exactly as the API gave them", async () => {
    page = await newPage(720);
    const result = (await session.client.callTool({
      name: "get_portfolio_overview",
      arguments: {},
    })) as { structuredContent: Record<string, any> };
    const overview = result.structuredContent;
    const view = await show("ui://portfolio/overview.html", {}, result, { width: 720 });
    await expect
      .poll(() => view.locator("h1").textContent())
      .toBe(`Portfolio of ${overview.entity.name}`);
    const tiles = await view.locator(".tile-value").allTextContents();
    const grouped = (s: string) => s.replace(/\B(?=(\d{3})+(?!\d))/g, "\u202f");
    const [whole, cents] = (overview.totals.encours as string).split(".");
    expect(tiles).toEqual([
      String(overview.totals.operations),
      expect.stringContaining(grouped(overview.totals.montant_engage.split(".")[0])),
      `${grouped(whole ?? "")}.${cents} ${overview.currency}`,
      String(overview.totals.deals),
    ]);
    const statusRows = view.locator("section.group").first().locator("tbody tr");
    expect(await statusRows.count()).toBe(overview.by_status.length);
    expect(await statusRows.first().locator("th").textContent()).toBe(overview.by_status[0].status);
    expect(await view.locator("h2").allTextContents()).toEqual([
      "By status",
      "By asset class",
      "By SPV",
      "Deal pipeline by stage",
    ]);
    await page.screenshot({ path: join(SHOTS, "overview.png"), fullPage: true });
  });

  it("the operation card shows its facts, key figures with units, and latest notes", async () => {
    page = await newPage();
    const list = (await session.client.callTool({
      name: "list_operations",
      arguments: { name_contains: "Terrasses" },
    })) as { structuredContent: { items: Array<{ id: string; name: string }> } };
    const target = list.structuredContent.items[0]!;
    const result = (await session.client.callTool({
      name: "get_operation",
      arguments: { operation_id: target.id },
    })) as { structuredContent: Record<string, any> };
    const view = await show("ui://portfolio/operation.html", { operation_id: target.id }, result);
    await expect.poll(() => view.locator("h1").textContent()).toBe(target.name);
    const facts = await view.locator(".facts dd").allTextContents();
    expect(facts).toContain(result.structuredContent.status);
    // Units come from get_field_definitions, called by the view through the host.
    await expect.poll(() => view.locator("section.group table td").count()).toBeGreaterThan(0);
    const ltv = result.structuredContent.kpi_snapshot.ltv;
    if (ltv !== undefined && ltv !== null)
      expect(await view.locator("section.group table").first().textContent()).toContain(
        String(ltv),
      );
    await expect
      .poll(() => view.locator(".notes li, section.group p.muted").count())
      .toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, "operation.png"), fullPage: true });
  });
});
