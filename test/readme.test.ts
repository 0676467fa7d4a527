import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

describe("README", () => {
  it("shows an openssl and curl flow that works as written", async () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const block =
      /running in another terminal \(it listens on port 4010\):\n\n```sh\n([\s\S]*?)```/.exec(
        readme,
      )?.[1];
    expect(block).toBeDefined();
    const script = block!.replace("http://127.0.0.1:4010/v1", sandbox.baseUrl);
    const mark = sandbox.control.mark();
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script]);
    expect(stdout).toContain('"status":"');
    expect(stdout).toContain('"user_id":"apikey:sandboxdemo"');
    const routes = sandbox.control.requests({ since: mark }).map((e) => `${e.routeId} ${e.status}`);
    expect(routes).toEqual([
      "auth_token 200",
      "operations_list 200",
      "saved_views_list 200",
      "operations_list 200",
      "operation_note_create 201",
    ]);
    const active = sandbox.control.requests({ since: mark, routeId: "operations_list" })[0];
    expect(active?.query).toMatchObject({ status: "active" });
  });
});
