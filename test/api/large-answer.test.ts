import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ApiError } from "../../src/http/errors.js";
import { clientFor } from "../helpers/api.js";
import { serve, stopServed, WAYS } from "../helpers/served.js";

/**
 * An upstream answer larger than PORTFOLIO_MAX_RESPONSE_BYTES is refused with one sentence and
 * never held whole: refused on its Content-Length before a byte of it is read, or counted as it
 * streams (chunked) and abandoned past the cap. A 150 MB answer used to take the server's
 * resident memory to 650-820 MiB (`node bench/large-answer.mjs` measures it).
 */
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(stopServed);
afterAll(() => sandbox.close());

const LIMIT = 1_048_576;
const deals = { routeId: "deals_list" };

describe("upstream answers over the cap", () => {
  for (const [wire, era] of WAYS) {
    it(`are refused with one sentence, declared or chunked, and the next call works (${wire}, ${era})`, async () => {
      const served = await serve(sandbox, {
        wire,
        era,
        env: { PORTFOLIO_MAX_RESPONSE_BYTES: String(LIMIT) },
      });
      try {
        for (const declareLength of [true, false]) {
          sandbox.control.largeAnswer(2_000_000, { count: 1, match: deals, declareLength });
          const refused = await served.callTool("list_deals", { limit: 5 });
          expect(refused.isError, `declared: ${declareLength}`).toBe(true);
          expect(refused.content[0]?.text).toMatch(
            /^The Partner API answered list_deals \(HTTP 200\), but its answer is larger than 1048576 bytes \(PORTFOLIO_MAX_RESPONSE_BYTES\), so it was not read: a smaller page or a narrower filter avoids it, or an operator can raise that setting \(request pmcp-[\w-]+\)\.$/,
          );
        }
        // Under the cap, the same padded answer is read as usual.
        sandbox.control.largeAnswer(600_000, { count: 1, match: deals, declareLength: false });
        const padded = await served.callTool("list_deals", { limit: 5 });
        expect(padded.isError).toBeFalsy();
        expect(padded.structuredContent?.items).toHaveLength(5);
        expect((await served.callTool("list_deals", { limit: 5 })).isError).toBeFalsy();
      } finally {
        await served.close();
      }
    });
  }

  it("a write whose answer is over the cap was sent once: the error says the API answered, with its status", async () => {
    const { api } = clientFor(sandbox, { maxResponseBytes: LIMIT });
    try {
      const mark = sandbox.control.mark();
      const route = { routeId: "custom_dashboard_create" };
      sandbox.control.largeAnswer(3_000_000, { count: 1, match: route, declareLength: false });
      const error = await api
        .call("custom_dashboard_create", { body: { name: "Trop bavard" } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        code: "answer_too_large",
        status: 201,
        operationId: "custom_dashboard_create",
      });
      // Sent once (never retried), and applied: the API has the dashboard.
      expect(sandbox.control.requests({ since: mark, ...route })).toHaveLength(1);
      expect(
        sandbox.control.state.data.dashboards.filter((d) => d.name === "Trop bavard"),
      ).toHaveLength(1);
    } finally {
      await api.close();
    }
  });

  it("the token exchange's answer is capped too", async () => {
    const { api } = clientFor(sandbox, { maxResponseBytes: 65_536 });
    try {
      sandbox.control.largeAnswer(100_000, { count: 1, match: { kind: "exchange" } });
      const error = await api.call("deals_list", { query: {} }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "answer_too_large", operationId: "auth_token" });
    } finally {
      await api.close();
    }
  });

  it("PORTFOLIO_MAX_RESPONSE_BYTES: a whole number of bytes from 65536 (default 20 MiB)", () => {
    const env = {
      PORTFOLIO_API_BASE_URL: "https://partner.example.com/api/v1",
      PORTFOLIO_API_KEY_ID: "acme2026",
      PORTFOLIO_API_SECRET: "s3cret-value",
    };
    expect(loadConfig({ env }).api.maxResponseBytes).toBe(20_971_520);
    expect(
      loadConfig({ env: { ...env, PORTFOLIO_MAX_RESPONSE_BYTES: "1048576" } }).api.maxResponseBytes,
    ).toBe(1_048_576);
    expect(() => loadConfig({ env: { ...env, PORTFOLIO_MAX_RESPONSE_BYTES: "1000" } })).toThrow(
      "PORTFOLIO_MAX_RESPONSE_BYTES: must be at least 65536",
    );
    expect(() => loadConfig({ env: { ...env, PORTFOLIO_MAX_RESPONSE_BYTES: "20MB" } })).toThrow(
      "PORTFOLIO_MAX_RESPONSE_BYTES: must be a whole number from 65536 to 1073741824",
    );
  });
});
