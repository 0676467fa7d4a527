import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientEntry, startShared, stopShared } from "../helpers/shared.js";

/** docs/audit.md's commands, run as written on a trail a real deployment wrote. */
const run = promisify(execFile);
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const docs = readFileSync(new URL("../../docs/audit.md", import.meta.url), "utf8");
const blocks = [...docs.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
const camille: ClientEntry = {
  name: "camille",
  token: "audit-docs-token-camille-01234",
  delegated_user: { email: "camille.martin@aurore-capital.example" },
};
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterAll(async () => {
  await stopShared();
  await sandbox.close();
});

describe("docs/audit.md", () => {
  it("verifies and queries a trail as its commands say", async () => {
    const dir = mkdtempSync(join(tmpdir(), "audit-docs-"));
    const server = await startShared(sandbox, [camille], {
      PORTFOLIO_AUDIT_FILE: join(dir, "audit.jsonl"),
    });
    const { client } = await server.connect(camille.token);
    const draft = (await client.callTool({
      name: "create_operation_note",
      arguments: { operation_id: "5ced923a-d6bb-4559-8481-29af260cd031", content: "Vu en comité" },
    })) as any;
    await client.callTool({
      name: "confirm_write",
      arguments: { confirmation_id: draft.structuredContent.confirmation_id },
    });
    await client.close();
    await server.stop();

    expect(blocks).toHaveLength(2);
    const [verify, query] = blocks.map((block) =>
      block.replaceAll("npx portfolio-mcp", `${process.execPath} ${CLI}`),
    );
    const shell = (script: string) =>
      run("bash", ["-euo", "pipefail", "-c", `cd ${dir}\n${script}`]);
    expect((await shell(verify!)).stdout).toMatch(/^holds: replica .+, \d+ record\(s\)/);
    const rows = (await shell(query!)).stdout.trim().split("\n");
    expect(rows[0]).toMatch(/^time,replica,seq,event,principal/);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain("http:camille");
    expect(rows[1]).toContain(",decision,");
  }, 60_000);
});
