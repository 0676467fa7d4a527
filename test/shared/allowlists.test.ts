import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/transport/clients.js";
import { contractRoutes } from "../helpers/api.js";
import { startShared } from "../helpers/shared.js";

/**
 * Clients-file allowlists that name operation ids and families, not only tools, on a server
 * that loads the key's contract: each client sees, and the generic tools reach, only that.
 */

const CAMILLE = { email: "camille.martin@aurore-capital.example" };
const DESK = "desk-token-0123456789abcdef";
const NOTER = "noter-token-0123456789abcdef";
const DEALER = "dealer-token-0123456789abcdef";
const READER = "reader-token-0123456789abcdef";
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

let sandbox: Sandbox;
let contractFile: string;
let shared: Awaited<ReturnType<typeof startShared>>;
/** What the desk's allowlist covers: the deals family and one operation of another. */
let deskOperations: Set<string>;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  const url = new URL(`/_admin/keys/${sandbox.credentials.keyId}/contract.json`, sandbox.baseUrl);
  contractFile = join(mkdtempSync(join(tmpdir(), "allowlist-contract-")), "contract.json");
  writeFileSync(contractFile, await (await fetch(url)).text());
  const routes = await contractRoutes(sandbox);
  deskOperations = new Set(
    [...routes.values()]
      .filter((op) => op.family === "deals" || op.id === "operations_list")
      .map((op) => op.id),
  );
  shared = await startShared(
    sandbox,
    [
      {
        name: "desk",
        token: DESK,
        delegated_user: CAMILLE,
        tools: ["deals", "operations_list", "confirm_write", "cancel_write"],
      },
      { name: "noter", token: NOTER, delegated_user: CAMILLE, tools: ["operation_note_create"] },
      { name: "dealer", token: DEALER, delegated_user: CAMILLE, tools: ["deals"] },
      {
        name: "reader",
        token: READER,
        delegated_user: CAMILLE,
        read_only: true,
        tools: ["deals"],
      },
    ],
    { PORTFOLIO_CONTRACT_FILE: contractFile },
  );
});
afterAll(async () => {
  await shared?.stop();
  await sandbox.close();
});

type Reply = { structuredContent: any; isError?: boolean; content: any[] };

async function session(token: string) {
  const { client } = await shared.connect(token);
  return {
    client,
    names: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
    call: async (name: string, args: object = {}) =>
      (await client.callTool({ name, arguments: args as Record<string, unknown> })) as Reply,
  };
}

describe("an allowlist of a family and an operation id", () => {
  it("lists the curated tools they cover and the generic tools, nothing else", async () => {
    const desk = await session(DESK);
    try {
      expect(await desk.names()).toEqual([
        "call_api_read",
        "cancel_write",
        "confirm_write",
        "draft_api_write",
        "find_api_operations",
        "get_deal",
        "list_deals",
        "list_operations",
      ]);
      await expect(desk.client.callTool({ name: "get_operation", arguments: {} })).rejects.toThrow(
        "Tool get_operation is not offered here: it is outside this client's allowlist.",
      );
    } finally {
      await desk.client.close();
    }
  });

  it("find_api_operations marks what the allowlist leaves out as not offered here", async () => {
    const desk = await session(DESK);
    try {
      for (const query of ["notes on an operation", "notes on a deal", "delete a task", "users"]) {
        const found = await desk.call("find_api_operations", { query });
        for (const op of found.structuredContent.operations as Array<{
          id: string;
          not_offered?: string;
        }>)
          if (!deskOperations.has(op.id))
            expect(op.not_offered, `${query}: ${op.id}`).toMatch(
              /allowlist|PORTFOLIO_ALLOW_SENSITIVE/,
            );
          else expect(op.not_offered, `${query}: ${op.id}`).toBeUndefined();
      }
      const notes = await desk.call("find_api_operations", { query: "notes on a deal" });
      expect(notes.structuredContent.operations[0].id).toBe("deal_notes_list");
      const family = await desk.call("find_api_operations", { query: "alerts", family: "alerts" });
      expect(family.structuredContent.operations.length).toBeGreaterThan(0);
      for (const op of family.structuredContent.operations)
        expect(op.not_offered).toBe("outside this client's allowlist");
    } finally {
      await desk.client.close();
    }
  });

  it("call_api_read reaches the allowlisted operations and refuses the others before sending", async () => {
    const desk = await session(DESK);
    try {
      const deal = sandbox.control.state.data.deals[0]!;
      const notes = await desk.call("call_api_read", {
        operation: "deal_notes_list",
        path: { deal_id: deal.id },
      });
      expect(notes.isError, notes.content[0]?.text).toBeFalsy();
      expect(notes.structuredContent.operation).toBe("deal_notes_list");

      const operation = sandbox.control.state.data.operations[0]!;
      const mark = sandbox.control.mark();
      const refused = await desk.call("call_api_read", {
        operation: "operation_get",
        path: { operation_id: operation.id },
      });
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toBe(
        "operation_get is not offered here: outside this client's allowlist (nothing was sent).",
      );
      expect(sandbox.control.requests({ since: mark })).toEqual([]);
    } finally {
      await desk.client.close();
    }
  });

  it("draft_api_write drafts a write of the family, and confirm_write sends it once", async () => {
    const desk = await session(DESK);
    try {
      const deal = sandbox.control.state.data.deals[0]!;
      const mark = sandbox.control.mark();
      const draft = await desk.call("draft_api_write", {
        operation: "deal_note_create",
        path: { deal_id: deal.id },
        body: { content: "Relancer le notaire" },
      });
      expect(draft.isError, draft.content[0]?.text).toBeFalsy();
      const done = await desk.call("confirm_write", {
        confirmation_id: draft.structuredContent.confirmation_id,
      });
      expect(done.structuredContent.status).toBe("succeeded");
      expect(sandbox.control.requests({ since: mark, routeId: "deal_note_create" })).toHaveLength(
        1,
      );
      const outside = await desk.call("draft_api_write", {
        operation: "operation_note_create",
        path: { operation_id: sandbox.control.state.data.operations[0]!.id },
        body: { content: "x" },
      });
      expect(outside.content[0].text).toBe(
        "operation_note_create is not offered here: outside this client's allowlist (nothing was drafted).",
      );
    } finally {
      await desk.client.close();
    }
  });
});

describe("allowlists that can draft", () => {
  it("a write's id offers its curated draft tool (the lookup that names the target comes with it)", async () => {
    const noter = await session(NOTER);
    try {
      expect(await noter.names()).toEqual(["create_operation_note"]);
    } finally {
      await noter.client.close();
    }
  });

  it("are warned about at startup when they cannot confirm; a read-only client is not", async () => {
    const stderr = await shared.stderr();
    expect(stderr).toContain(
      "client noter may draft writes (create_operation_note) but its tools lack confirm_write and cancel_write",
    );
    expect(stderr).toContain(
      "client dealer may draft writes (draft_api_write: deal_create, deal_update, deal_note_create, deal_note_update) but its tools lack confirm_write and cancel_write",
    );
    expect(stderr).not.toContain("client desk ");
    expect(stderr).not.toContain("client reader ");
    const reader = await session(READER);
    try {
      expect(await reader.names()).toEqual([
        "call_api_read",
        "find_api_operations",
        "get_deal",
        "list_deals",
      ]);
    } finally {
      await reader.client.close();
    }
  });
});

describe("an unknown allowlist entry", () => {
  const serve = (tools: string[], env: Record<string, string> = {}) => {
    const file = join(mkdtempSync(join(tmpdir(), "clients-")), "clients.json");
    writeFileSync(
      file,
      JSON.stringify({
        clients: [{ name: "typo", token_sha256: sha256Hex(DESK), delegated_user: CAMILLE, tools }],
      }),
    );
    return spawnSync(process.execPath, [CLI, "serve", "--http", "--port", "0"], {
      env: {
        ...Object.fromEntries(
          Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
        ),
        PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
        PORTFOLIO_API_KEY_ID: sandbox.credentials.keyId,
        PORTFOLIO_API_SECRET: sandbox.credentials.secret,
        PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "startup-")),
        PORTFOLIO_MCP_CLIENTS_FILE: file,
        ...env,
      },
      encoding: "utf8",
      timeout: 10_000,
    });
  };

  it("stops the server, naming the nearest tool, operation or family of the contract", () => {
    const result = serve(["deal", "list_deal", "deal_notes_lst", "get_deal"], {
      PORTFOLIO_CONTRACT_FILE: contractFile,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      "client typo lists unknown entries in tools: deal (did you mean deals?), list_deal (did you mean list_deals?), deal_notes_lst (did you mean deal_notes_list?); an entry is a tool name, or an operation id or a family of the key's contract",
    );
  });

  it("without a contract, knows the curated catalogue's operations and families only", () => {
    const result = serve(["deal_notes_list", "spvs"]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      "client typo lists unknown entries in tools: deal_notes_list (did you mean deals_list?); an entry is a tool name, or an operation id or a family of the curated catalogue (no contract loaded)",
    );
  });
});
