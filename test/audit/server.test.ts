import { spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AuditRecord } from "../../src/audit/record.js";
import { verifyChains } from "../../src/audit/verify.js";
import { rawStdio, stopRawStdio } from "../helpers/raw-stdio.js";
import { type ClientEntry, startShared, stopShared } from "../helpers/shared.js";

/**
 * The audit trail of a real `serve --http` deployment, read back from its file: who read what,
 * who confirmed which write through which channel, what reached the API, and a chain that holds
 * (or says where it was cut). The sandbox's request log is the witness of what was sent.
 */
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const camille: ClientEntry = {
  name: "camille",
  token: "audit-token-camille-0123456789",
  delegated_user: { email: "camille.martin@aurore-capital.example" },
};
const louis: ClientEntry = {
  name: "louis",
  token: "audit-token-louis-01234567890",
  delegated_user: { email: "louis.bernard@aurore-capital.example" },
};
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(async () => {
  await stopShared();
  await stopRawStdio();
});
afterAll(() => sandbox.close());

const records = (file: string): AuditRecord[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditRecord);
const call = (client: any, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<any>;
const auditFile = () => join(mkdtempSync(join(tmpdir(), "audit-server-")), "audit.jsonl");

describe("the audit trail of a shared deployment", () => {
  it("records reads, a refused read, a confirmed write and a cancelled one, by two clients", async () => {
    const file = auditFile();
    const server = await startShared(sandbox, [camille, louis], { PORTFOLIO_AUDIT_FILE: file });
    const a = (await server.connect(camille.token)).client;
    const b = (await server.connect(louis.token)).client;
    const operation = sandbox.control.state.data.operations[9]!;
    expect((await call(a, "list_deals", { limit: 2 })).isError).toBeFalsy();
    const missing = await call(a, "get_operation", {
      operation_id: "00000000-0000-4000-8000-000000000000",
    });
    expect(missing.isError).toBe(true);
    const draft = await call(a, "create_operation_note", {
      operation_id: operation.id,
      content: "Note auditée",
    });
    const done = await call(a, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(done.structuredContent.status).toBe("succeeded");
    const other = await call(b, "create_custom_dashboard", { name: "Tableau annulé" });
    await call(b, "cancel_write", { confirmation_id: other.structuredContent.confirmation_id });
    await a.close();
    await b.close();

    const all = records(file);
    expect((await verifyChains([file]))[0]?.broken).toBeNull();
    expect(all[0]).toMatchObject({ event: "chain-start", seq: 0 });
    const requests = all.filter((r) => r.event === "request");
    const read = requests.find((r) => r.target === "list_deals")!;
    expect(read).toMatchObject({
      principal: "http:camille",
      delegated_user: "camille.martin@aurore-capital.example",
      method: "tools/call",
      outcome: "ok",
    });
    expect(read.operations?.map((o) => [o.id, o.status])).toContainEqual(["deals_list", 200]);
    expect(read.args_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(read.args).toBeUndefined(); // only the digest, by default
    expect(read.identity).toMatch(/^[0-9a-f]{24}$/);
    expect(requests.find((r) => r.target === "get_operation")).toMatchObject({
      outcome: "error",
      reason: "tool_error",
    });
    const intent = /\[(cf_[^\]]+)\]$/.exec(draft.structuredContent.confirmation_id)![1];
    const steps = all.filter((r) => r.intent === intent).map((r) => [r.event, r.outcome]);
    expect(steps).toEqual([
      ["draft", "drafted"],
      ["decision", "confirmed"],
      ["delivery", "delivered"],
    ]);
    const confirmed = all.find((r) => r.intent === intent && r.event === "decision")!;
    expect(confirmed).toMatchObject({
      principal: "http:camille",
      channel: "two-step",
      target: "operation_note_create",
      subject: { operation_id: operation.id },
    });
    expect(confirmed.idempotency_key).toMatch(/^pmcp-/);
    const sent = sandbox.control.requests({ routeId: "operation_note_create" }).at(-1)!;
    expect(sent.headers["idempotency-key"]).toBe(confirmed.idempotency_key);
    const cancelled = all.filter((r) => r.principal === "http:louis" && r.event === "decision");
    expect(cancelled.map((r) => [r.outcome, r.channel])).toEqual([["cancelled", "two-step"]]);

    // "Who confirmed writes on this operation?", from the command line.
    const query = spawnSync(
      process.execPath,
      [
        CLI,
        "audit",
        "query",
        "--event",
        "decision",
        "--outcome",
        "confirmed",
        "--operation",
        operation.id,
        file,
      ],
      { encoding: "utf8" },
    );
    expect(query.status, query.stderr).toBe(0);
    const answered = query.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(answered.map((r) => [r.principal, r.intent])).toEqual([["http:camille", intent]]);
  }, 60_000);

  it("refuses to send a write whose confirmation it cannot record, and lets reads go on", async () => {
    const file = auditFile();
    const server = await startShared(sandbox, [camille], { PORTFOLIO_AUDIT_FILE: file });
    const { client } = await server.connect(camille.token);
    const draft = await call(client, "create_custom_dashboard", { name: "Sans trace" });
    // The trail's file cannot be written any more: its path now holds a directory.
    renameSync(file, `${file}.before`);
    mkdirSync(file);
    const mark = sandbox.control.mark();
    const refused = await call(client, "confirm_write", {
      confirmation_id: draft.structuredContent.confirmation_id,
    });
    expect(refused.isError).toBe(true);
    expect(refused.content[0].text).toContain(
      "This write was not sent: its confirmation could not be recorded",
    );
    expect(sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" })).toEqual(
      [],
    );
    expect((await call(client, "list_deals", { limit: 1 })).isError).toBeFalsy();
    await client.close();
    expect(await server.stderr()).toContain(
      "an audit record could not be written; the call went on",
    );
    const metrics = await server.raw("GET", "/metrics");
    expect(metrics.body).toMatch(/portfolio_mcp_audit_failures_total\{event="decision"\} 1/);
  }, 60_000);

  it("after a crash, the next start says where the chain was cut and continues it", async () => {
    const file = auditFile();
    const env = { PORTFOLIO_AUDIT_FILE: file };
    const first = await startShared(sandbox, [camille], env);
    const { client } = await first.connect(camille.token);
    await Promise.all(
      Array.from({ length: 20 }, (_, n) => call(client, "list_deals", { limit: 1, offset: n })),
    );
    const burst = Array.from({ length: 20 }, () =>
      call(client, "list_deals", { limit: 1 }).catch(() => null),
    );
    await first.stop("SIGKILL");
    await Promise.all(burst);
    // What a crash in the middle of a write leaves (the process, or the machine under it).
    appendFileSync(file, '{"seq":999,"time":"2026-11-26T0');
    const second = await startShared(sandbox, [camille], env);
    await second.stop();
    const [report] = await verifyChains([file]);
    expect(report?.broken).toBeNull();
    expect(report?.truncations).toHaveLength(1);
    expect(report?.truncations[0]?.resumed).toBe(true);
    const verified = spawnSync(process.execPath, [CLI, "audit", "verify", file], {
      encoding: "utf8",
    });
    expect(verified.status).toBe(0);
    expect(verified.stdout).toContain("a line cut short by a crash while it was written");
  }, 60_000);

  it("records a read whose client quits as soon as it has the answer (stdio)", async () => {
    // The record is made once the answer is on its way: a client closing stdin at once must
    // not outrun it.
    const file = auditFile();
    const server = rawStdio(sandbox, { PORTFOLIO_AUDIT_FILE: file });
    await server.initialize();
    server.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "list_deals", arguments: { limit: 1 } },
    });
    await server.next((m) => m.id === 2);
    server.child.stdin.end();
    await once(server.child, "exit");
    const read = records(file).filter((r) => r.event === "request");
    expect(read.map((r) => [r.method, r.target, r.outcome])).toEqual([
      ["tools/call", "list_deals", "ok"],
    ]);
    expect((await verifyChains([file]))[0]?.broken).toBeNull();
  }, 60_000);

  it("is off over stdio unless asked, and on for serve --http under the state directory", async () => {
    const server = await startShared(sandbox, [camille], {});
    const { client } = await server.connect(camille.token);
    await call(client, "list_deals", { limit: 1 });
    await client.close();
    const metrics = (await server.raw("GET", "/metrics")).body;
    expect(metrics).toMatch(/portfolio_mcp_audit_records_total\{event="request"\} 1/);
    await server.stop();
    const stateDir = mkdtempSync(join(tmpdir(), "audit-stdio-"));
    const run = spawnSync(process.execPath, [CLI, "doctor", "--sandbox"], {
      env: { ...process.env, PORTFOLIO_STATE_DIR: stateDir, PORTFOLIO_LOG_LEVEL: "error" },
      encoding: "utf8",
    });
    expect(run.stdout).toMatch(/audit trail\s+ok\s+serve --http: .*audit\.jsonl; stdio: off/);
    expect(existsSync(join(stateDir, "audit"))).toBe(false);
  }, 60_000);
});
