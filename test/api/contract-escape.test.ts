import { type OpenApiDocument, type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hasDotSegment, staysUnderBase } from "../../src/api/base-path.js";
import { pathProblem } from "../../src/api/routes.js";
import { clientFor } from "../helpers/api.js";
import { serve, stopServed, WAYS } from "../helpers/served.js";

/**
 * A contract path with `.` or `..` segments (or `%2e`, which WHATWG URL reads as a dot) leaves
 * the API's base path on the same host once the URL is resolved: `/v1/%2e%2e/_admin/…` is the
 * sandbox's administration route, which served the key's whole export to the model. Such an
 * operation is now left out when the contract is loaded, with a warning naming it, and the
 * client refuses any URL that would leave the base path, whatever the route table says.
 */
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(stopServed);
afterAll(() => sandbox.close());

const escapes = (key: string): Record<string, string> => ({
  escape_dots: `/deals/../../_admin/keys/${key}/contract.json`,
  escape_encoded: `/%2e%2e/_admin/keys/${key}/contract.json`,
  escape_mixed: `/deals/.%2E/.%2e/_admin/keys/${key}/contract.json`,
  escape_single: "/./deals",
});

/** The export with each escape added as a copy of deals_list under its own path. */
const withEscapes = (key: string) => (document: OpenApiDocument) => {
  const paths = document.paths as Record<string, { get?: Record<string, unknown> }>;
  const template = paths["/deals"]?.get ?? {};
  for (const [id, path] of Object.entries(escapes(key)))
    paths[path] = { get: { ...template, operationId: id, parameters: [] } };
  return document;
};

const outsideBase = (mark: number) =>
  sandbox.control.requests({ since: mark }).filter((e) => !e.path.startsWith("/v1/"));

describe("contract paths that leave the base path", () => {
  for (const [wire, era] of WAYS) {
    it(`are left out at load with a warning naming each, and never sent (${wire}, ${era})`, async () => {
      const key = sandbox.credentials.keyId;
      const served = await serve(sandbox, { wire, era, contract: withEscapes(key) });
      try {
        const mark = sandbox.control.mark();
        for (const [id, path] of Object.entries(escapes(key))) {
          const reply = await served
            .callTool("call_api_read", { operation: id })
            .catch((error: Error) => ({ isError: true, content: [{ text: error.message }] }));
          expect(reply.isError, id).toBe(true);
          expect(served.stderr(), id).toContain(
            `operation ${id} (GET ${path}) left out: its path has a . or .. segment`,
          );
        }
        // The others are offered as before.
        const deals = await served.callTool("call_api_read", { operation: "deals_list" });
        expect(deals.isError).toBeFalsy();
        expect(outsideBase(mark)).toEqual([]);
      } finally {
        await served.close();
      }
    });
  }

  it("the client refuses to send a URL that leaves the base path, whatever the route table", async () => {
    const key = sandbox.credentials.keyId;
    const routes = new Map(
      Object.entries(escapes(key)).map(([id, path]) => [
        id,
        { ...clientFor(sandbox).api.operation("deals_list"), id, path, query: null },
      ]),
    );
    const { api } = clientFor(sandbox, {}, { routes });
    try {
      const mark = sandbox.control.mark();
      for (const id of routes.keys()) {
        const refused = await api.send(api.operation(id), {}).catch((e: Error) => e);
        expect(refused, id).toMatchObject({
          code: "not_offered",
          message: expect.stringContaining("leaves the API's base path"),
        });
        expect(() => api.validate(api.operation(id), {}), id).toThrow("nothing was sent");
      }
      expect(sandbox.control.requests({ since: mark })).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it("staysUnderBase: what WHATWG URL would resolve, dot segments in any spelling refused", () => {
    const base = "https://partner.example.com/api/v1";
    for (const path of ["/deals", "/deals/abc/notes", "/users/me", "/a.b/..c/%2e%2ex"])
      expect(staysUnderBase(base, path), path).toBe(true);
    for (const path of [
      "/../v2/deals",
      "/deals/../../admin",
      "/%2e%2e/admin",
      "/%2E./admin",
      "/.%2e/admin",
      "/./deals",
      "/deals/%2e",
      "/deals\\..\\..\\admin",
      "/.\t./admin",
      "/deals?x=1",
      "deals",
    ])
      expect(staysUnderBase(base, path), JSON.stringify(path)).toBe(false);
    expect(hasDotSegment("/a/%2E%2e/b")).toBe(true);
    expect(hasDotSegment("/a/...")).toBe(false);
    // PORTFOLIO_ROUTES_FILE moves an operation only to a path that stays (startup refuses).
    expect(pathProblem("/deals/%2E%2e/spvs", [])).toContain("must not contain empty, . or ..");
  });
});
