import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(() => sandbox.close());

/** The built server over stdio, spoken to in raw JSON-RPC so that it can be killed at will. */
function startServer(stateDir: string) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  );
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI], {
    env: {
      ...env,
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
      PORTFOLIO_API_SECRET: sandbox.credentials.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: sandbox.credentials.delegatedUserEmail,
      PORTFOLIO_STATE_DIR: stateDir,
      PORTFOLIO_CONFIRM: "two-step",
      PORTFOLIO_LOG_LEVEL: "warn",
    },
  });
  const waiting = new Map<number, (message: any) => void>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line);
    waiting.get(message.id)?.(message);
  });
  let nextId = 1;
  const request = (method: string, params: object) =>
    new Promise<any>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  const ready = request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "restart", version: "1" },
  }).then(() =>
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`,
    ),
  );
  return {
    child,
    ready,
    tool: (name: string, args: object) => request("tools/call", { name, arguments: args }),
  };
}

const intentFile = (stateDir: string, id: string) =>
  JSON.parse(readFileSync(join(stateDir, "intents", `${id}.json`), "utf8"));

async function until(check: () => boolean, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("a server restarted mid-send", () => {
  it("finds the confirmed intent and completes it with the same key: one record", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "restart-"));
    const operation = sandbox.control.state.data.operations[33]!;
    const text = `Note envoyée pendant un redémarrage ${Date.now()}`;
    const notes = () => sandbox.control.state.data.notes.filter((n) => n.text === text);

    const first = startServer(stateDir);
    await first.ready;
    const draft = await first.tool("create_operation_note", { operation_id: operation.id, text });
    const confirmationId = draft.result.structuredContent.confirmation_id as string;
    const id = /\[(cf_[^\]]+)\]$/.exec(confirmationId)![1]!;
    const held = sandbox.control.delay(800, {
      count: 1,
      match: { routeId: "operation_note_create" },
    });
    void first.tool("confirm_write", { confirmation_id: confirmationId });
    // The intent is marked sending before the request leaves: wait until the sandbox holds it.
    await until(() => sandbox.control.faultRemaining(held) === 0, "the request to arrive");
    first.child.kill("SIGKILL"); // mid-send: the request is on the wire, no answer will come
    await once(first.child, "exit");
    expect(intentFile(stateDir, id).state).toBe("sending");

    const second = startServer(stateDir);
    await second.ready;
    await until(
      () => intentFile(stateDir, id).state === "succeeded",
      "recovery to finish the write",
    );
    const intent = intentFile(stateDir, id);
    await until(() => notes().length > 0, "the note");
    await new Promise((r) => setTimeout(r, 900)); // let the first, delayed request land too
    expect(notes()).toHaveLength(1);
    expect(intent.result.id).toBe(notes()[0]!.id);
    const sent = sandbox.control
      .requests({ routeId: "operation_note_create" })
      .filter((e) => (e.body as { text?: string }).text === text);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(new Set(sent.map((e) => e.headers["idempotency-key"]))).toEqual(
      new Set([intent.idempotencyKey]),
    );

    // The same client and user, after the restart, get the recorded outcome; nothing is resent.
    const mark = sandbox.control.mark();
    const again = await second.tool("confirm_write", { confirmation_id: confirmationId });
    expect(again.result.isError).toBeFalsy();
    expect(again.result.structuredContent).toMatchObject({
      status: "succeeded",
      result: { id: notes()[0]!.id },
    });
    expect(sandbox.control.requests({ since: mark, routeId: "operation_note_create" })).toEqual([]);
    expect(notes()).toHaveLength(1);
    expect(readdirSync(join(stateDir, "intents")).filter((f) => f.endsWith(".tmp"))).toHaveLength(
      0,
    );
    second.child.kill("SIGTERM");
    await once(second.child, "exit");
  });
});
