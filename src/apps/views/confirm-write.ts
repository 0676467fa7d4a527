import { type App, type CallToolResult, el, errorText, mount, startView } from "./common.js";

/**
 * The confirmation card: the write exactly as drafted (action, target, author, fields,
 * warnings) with Confirm and Cancel. The buttons call app-only tools the model cannot call;
 * the token they pass is the sealed binding the server made for this one draft.
 */

/**
 * The preview as the server drafts it (writes/intent.ts `Preview`), restated: a view is browser
 * code, type-checked without Node's types, so it cannot import the server's modules.
 */
interface Preview {
  action: string;
  target: string;
  recorded_as: string;
  fields: Record<string, unknown>;
  billable: boolean;
  warnings?: string[];
}

interface Outcome {
  status: "awaiting_confirmation" | "succeeded" | "uncertain" | "cancelled";
  preview: Preview;
  expires_at?: string;
  result?: Record<string, unknown>;
  message: string;
}

/** Where the server puts the card's token: the result's _meta, for this view alone. */
const TOKEN_META = "portfolio-mcp/app_confirmation";

let expiryTimer: ReturnType<typeof setInterval> | undefined;
let onEscape: ((event: KeyboardEvent) => void) | undefined;

startView("portfolio-confirm-write", (result, app) => show(result, app)).catch(() =>
  mount(el("p", { class: "error" }, "This card could not connect to the conversation.")),
);

function show(result: CallToolResult, app: App): void {
  stopListening();
  const outcome = result.structuredContent as Outcome | undefined;
  const token = (result._meta as Record<string, { token?: unknown }> | undefined)?.[TOKEN_META];
  if (result.isError) mount(card(null, el("p", { class: "error" }, errorText(result))));
  else if (!outcome?.preview) mount(el("p", {}, "This result has no write to show."));
  else if (outcome.status === "awaiting_confirmation" && typeof token?.token === "string")
    askFor(outcome, { token: token.token }, app);
  else mount(card(outcome.preview, settledLine(outcome)));
}

/** The draft with its two buttons, until it is answered or expires. */
function askFor(outcome: Outcome, token: { token: string }, app: App): void {
  const status = el("p", { class: "status", role: "status", "aria-live": "polite" });
  const confirm = el("button", { type: "button", class: "primary" }, "Confirm");
  const cancel = el("button", { type: "button" }, "Cancel");
  const expiry = el("p", { class: "expiry" });
  const expiresAt = outcome.expires_at ? Date.parse(outcome.expires_at) : Number.NaN;

  const buttons = el("div", { class: "buttons" }, cancel, confirm);
  mount(card(outcome.preview, expiry, buttons, status));

  const setBusy = (busy: boolean) => {
    confirm.disabled = busy;
    cancel.disabled = busy;
  };
  const expired = () => Number.isFinite(expiresAt) && Date.now() >= expiresAt;
  const tick = () => {
    if (!Number.isFinite(expiresAt)) return;
    if (expired()) {
      stopListening();
      setBusy(true);
      buttons.hidden = true;
      expiry.className = "expiry expired";
      expiry.textContent = `This draft expired at ${clock(expiresAt)}; nothing was sent. Ask the assistant to draft it again.`;
      return;
    }
    const minutes = Math.max(1, Math.ceil((expiresAt - Date.now()) / 60_000));
    expiry.textContent = `Nothing is sent until you press Confirm. This draft expires at ${clock(expiresAt)} (in ${minutes} min).`;
  };
  tick();
  expiryTimer = setInterval(tick, 1_000);

  const answer = async (tool: "app_confirm_write" | "app_cancel_write") => {
    if (expired()) return tick();
    stopListening();
    setBusy(true);
    status.textContent = tool === "app_confirm_write" ? "Sending…" : "Cancelling…";
    let reply: CallToolResult;
    try {
      reply = await app.callServerTool({ name: tool, arguments: token });
    } catch {
      status.className = "status error";
      status.textContent = "The server could not be reached; nothing is known to be sent.";
      return;
    }
    buttons.hidden = true;
    expiry.hidden = true;
    const done = reply.structuredContent as Outcome | undefined;
    const line = reply.isError || !done ? errorText(reply) : settledText(done);
    status.className = reply.isError ? "status error" : "status done";
    status.textContent = line;
    await report(app, outcome.preview, tool, line);
  };
  // A button's own Enter and Space only: nothing confirms unless Confirm has the focus.
  confirm.addEventListener("click", () => void answer("app_confirm_write"));
  cancel.addEventListener("click", () => void answer("app_cancel_write"));
  onEscape = (event) => {
    if (event.key === "Escape") void answer("app_cancel_write");
  };
  document.addEventListener("keydown", onEscape);
}

function stopListening(): void {
  if (expiryTimer) clearInterval(expiryTimer);
  expiryTimer = undefined;
  if (onEscape) document.removeEventListener("keydown", onEscape);
  onEscape = undefined;
}

/** Tells the conversation what the person did and what came of it. */
async function report(app: App, preview: Preview, tool: string, line: string): Promise<void> {
  const what = `${preview.action}: ${preview.target}`;
  const text =
    tool === "app_confirm_write"
      ? `The user pressed Confirm in the card for "${what}". ${line}`
      : `The user pressed Cancel in the card for "${what}". ${line}`;
  const host = app.getHostCapabilities();
  try {
    if (host?.updateModelContext)
      await app.updateModelContext({ content: [{ type: "text", text }] });
    else if (host?.message)
      await app.sendMessage({ role: "user", content: [{ type: "text", text }] });
  } catch {
    // The card already shows the outcome; the conversation learns it on its next read.
  }
}

function card(preview: Preview | null, ...rest: Array<Node | null>): HTMLElement {
  if (!preview) return el("section", { class: "card" }, ...rest);
  const rows = Object.entries(preview.fields).map(([name, value]) =>
    el("tr", {}, el("th", { scope: "row" }, name), el("td", {}, shown(value))),
  );
  return el(
    "section",
    { class: "card", "aria-label": `${preview.action}: ${preview.target}` },
    el("h1", {}, preview.action),
    el("p", { class: "target" }, preview.target),
    el("p", { class: "author" }, `Recorded by the API as written by: ${preview.recorded_as}`),
    rows.length > 0
      ? el("table", { class: "fields" }, el("tbody", {}, ...rows))
      : el("p", { class: "muted" }, "No fields: the request has no body."),
    preview.billable
      ? el("p", { class: "warning" }, "Billable: the provider charges each call.")
      : null,
    ...(preview.warnings ?? []).map((w) => el("p", { class: "warning" }, w)),
    ...rest,
  );
}

function settledLine(outcome: Outcome): HTMLElement {
  return el(
    "p",
    { class: outcome.status === "succeeded" ? "status done" : "status" },
    settledText(outcome),
  );
}

/** What became of the write: the created record by name and id, or why nothing was. */
function settledText(outcome: Outcome): string {
  if (outcome.status !== "succeeded") return outcome.message;
  const record = outcome.result ?? {};
  const name = ["name", "title", "label", "subject"]
    .map((key) => record[key])
    .find((value): value is string => typeof value === "string" && value.length > 0);
  const id = typeof record.id === "string" || typeof record.id === "number" ? record.id : null;
  const what = [name ? `«${name}»` : null, id === null ? null : `(id ${id})`]
    .filter(Boolean)
    .join(" ");
  return what ? `Done: ${what}. ${outcome.message}` : outcome.message;
}

/** A field value as the preview shows it: null clears, texts as they are, the rest as JSON. */
function shown(value: unknown): string {
  if (value === null) return "cleared (null)";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}
