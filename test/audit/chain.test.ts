import { execFile } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AuditSettings, AuditTrail, AuditWriteError } from "../../src/audit/trail.js";
import { verifyChains } from "../../src/audit/verify.js";
import { capturedLogger } from "../helpers/api.js";

const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const settings = (file: string, extra: Partial<AuditSettings> = {}): AuditSettings => ({
  file,
  identity: "hash",
  arguments: "digest",
  maxBytes: 64 * 1024 * 1024,
  ...extra,
});
const open = (file: string, extra: Partial<AuditSettings> = {}) =>
  AuditTrail.open({
    settings: settings(file, extra),
    replica: "replica-a",
    key: Buffer.alloc(32, 3),
    logger: capturedLogger().logger,
    redact: (v) => v,
  });
const fresh = () => join(mkdtempSync(join(tmpdir(), "audit-")), "audit.jsonl");
/** The CLI in a 32 MiB heap, run without blocking: its exit status and what it printed. */
const cli = (...args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--max-old-space-size=32", CLI, ...args],
      { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({
          status: error ? ((error.code as number | undefined) ?? null) : 0,
          stdout,
          stderr,
        }),
    );
  });
/** A trail of `n` reads by two clients, closed. */
/** The i-th of a run of reads: two principals taking turns, one operation each. */
const readOf = (i: number) => ({
  event: "request" as const,
  principal: i % 2 ? "http:camille" : "http:louis",
  method: "tools/call",
  target: "get_operation",
  subject: { operation_id: `op-${i}` },
  arguments: { operation_id: `op-${i}` },
  outcome: "ok" as const,
});

function written(n: number, file = fresh(), extra: Partial<AuditSettings> = {}) {
  const trail = open(file, extra);
  for (let i = 0; i < n; i++) trail.append(readOf(i), false);
  trail.close();
  return file;
}
const lines = (file: string) => readFileSync(file, "utf8").split("\n").filter(Boolean);
const verify = async (...files: string[]) => (await verifyChains(files))[0]!;

describe("the audit chain", () => {
  it("holds as written: each record names the one before by its hash", async () => {
    const file = written(20);
    const report = await verify(file);
    expect(report).toMatchObject({ broken: null, records: 21, firstSeq: 0, lastSeq: 20 });
    const [start, first] = lines(file).map((l) => JSON.parse(l));
    expect(start).toMatchObject({ event: "chain-start", seq: 0, prev: "0".repeat(64) });
    // Arguments are not stored, only their HMAC; the principal is also recorded as a hash.
    expect(first.args).toBeUndefined();
    expect(first.args_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(first.identity).toMatch(/^[0-9a-f]{24}$/);
  });

  it("names the first record changed, removed or reordered", async () => {
    const changed = written(10);
    const rows = lines(changed);
    rows[4] = rows[4]!.replace('"ok"', '"OK"');
    writeFileSync(changed, `${rows.join("\n")}\n`);
    expect((await verify(changed)).broken?.why).toBe(
      `record 4 was changed: record 5 (${changed}:6) names another hash`,
    );

    const removed = written(10);
    writeFileSync(
      removed,
      `${lines(removed)
        .filter((_, i) => i !== 6)
        .join("\n")}\n`,
    );
    expect((await verify(removed)).broken?.why).toBe(
      `record 7 (${removed}:7): records 6 to 6 were removed`,
    );

    const swapped = written(10);
    const order = lines(swapped);
    [order[3], order[4]] = [order[4]!, order[3]!];
    writeFileSync(swapped, `${order.join("\n")}\n`);
    expect((await verify(swapped)).broken?.why).toBe(
      `record 4 (${swapped}:4) comes before record 3: records were reordered`,
    );
  });

  it("reports a line a crash cut short, and the next start continues the chain saying so", async () => {
    const file = written(5);
    const whole = readFileSync(file, "utf8");
    writeFileSync(file, `${whole}{"seq":6,"time":"2026-11-26T0`); // killed mid-write
    const before = await verify(file);
    expect(before.broken).toBeNull();
    expect(before.truncations).toEqual([{ file, line: 7, resumed: false }]);
    const trail = open(file);
    trail.append(
      { event: "request", method: "tools/call", target: "list_deals", outcome: "ok" },
      true,
    );
    trail.close();
    const after = await verify(file);
    expect(after.broken).toBeNull();
    expect(after.truncations).toEqual([{ file, line: 7, resumed: true }]);
    const resumed = JSON.parse(lines(file).at(-2)!);
    expect(resumed).toMatchObject({ event: "chain-resumed", seq: 6 });
    expect(resumed.note).toContain("cut short");
  });

  it("runs on across rotated files, in any order given, and misses a file taken out", async () => {
    const file = fresh();
    written(400, file, { maxBytes: 16 * 1024 });
    const dir = join(file, "..");
    const files = readdirSync(dir).map((n) => join(dir, n));
    expect(files.length).toBeGreaterThan(3);
    const report = await verify(...files.reverse());
    expect(report).toMatchObject({ broken: null, records: 400 + files.length });
    const middle = report.files[1]!;
    const rest = report.files.filter((f) => f !== middle);
    expect((await verify(...rest)).broken?.why).toMatch(/were removed$/);
  });

  it("starts a new file when its file is moved away, and refuses to write when it cannot", async () => {
    const file = fresh();
    const trail = open(file);
    trail.append({ event: "request", outcome: "ok" }, false);
    renameSync(file, `${file}.moved`); // another tool rotated it
    trail.append({ event: "decision", outcome: "confirmed" }, true);
    expect(JSON.parse(lines(file)[0]!)).toMatchObject({ event: "chain-start", seq: 2 });
    expect((await verify(`${file}.moved`, file)).broken).toBeNull();
    // Now the path cannot hold a file at all.
    renameSync(file, `${file}.second`);
    mkdirSync(file);
    expect(() => trail.append({ event: "decision", outcome: "confirmed" }, true)).toThrow(
      AuditWriteError,
    );
    trail.close();
  });

  it("answers a query over 100,000 records in bounded memory", async () => {
    // Written and read without blocking this worker: a synchronous stretch of tens of seconds
    // (likely under load) starves the test runner's own messages, which then time out.
    const file = fresh();
    const trail = open(file);
    for (let i = 0; i < 100_000; i++) {
      trail.append(readOf(i), false);
      if (i % 5_000 === 4_999) await new Promise((resolve) => setImmediate(resolve));
    }
    trail.close();
    // A 32 MiB heap for a 40 MB file: holding its records at once would need several times more.
    const query = await cli(
      "audit",
      "query",
      "--principal",
      "http:camille",
      "--operation",
      "op-99999",
      "--format",
      "csv",
      file,
    );
    expect(query.status, query.stderr).toBe(0);
    const rows = query.stdout.trim().split("\n");
    expect(rows[0]).toMatch(/^time,replica,seq,event,principal/);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain("http:camille");
    const verified = await cli("audit", "verify", file);
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stdout).toContain("holds: replica replica-a, 100001 record(s)");
  }, 60_000);
});
