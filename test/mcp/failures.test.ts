import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
} from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { ArgumentsRefused, UserFacingError } from "../../src/errors.js";
import { ApiError, type ApiErrorCode } from "../../src/http/errors.js";
import { failed, failureKind, type ObservedMethod } from "../../src/mcp/failures.js";
import { StoreUnavailable } from "../../src/state/redis.js";
import { GateRefusal } from "../../src/writes/gate.js";
import { capturedLogger } from "../helpers/api.js";

/**
 * Every error kind the client core has, through every method that reads or changes data: the
 * one mapping (src/mcp/failures.ts). A tool answers isError with the sentence; a completion
 * answers nothing; a resource or a prompt throws the protocol error its kind calls for.
 */
const CODES: ApiErrorCode[] = [
  "invalid_input",
  "invalid_request",
  "bad_request",
  "payload_too_large",
  "not_found",
  "not_configured",
  "not_offered",
  "authentication_failed",
  "forbidden",
  "conflict",
  "rate_limited",
  "server_error",
  "unexpected_response",
  "answer_too_large",
  "network_error",
  "timeout",
  "aborted",
];
const api = (code: ApiErrorCode) =>
  new ApiError(`the API said ${code}`, { code, operationId: "deals_list", requestId: "pmcp-1" });
const samples: Array<[string, unknown, string]> = [
  ...CODES.map((code): [string, unknown, string] => [`ApiError ${code}`, api(code), ""]),
  [
    "the gate's refusal",
    new GateRefusal("foreign", "Another client's write; nothing was sent."),
    "refused",
  ],
  ["a user-facing sentence", new UserFacingError("This server is read-only."), "refused"],
  ["arguments refused", new ArgumentsRefused("x was not rendered: y must be a UUID."), "invalid"],
  ["Redis silent", new StoreUnavailable("127.0.0.1:6379", null, true), "unavailable"],
  ["a bug", new TypeError("cannot read properties of undefined"), "internal"],
];
const METHODS: ObservedMethod[] = [
  "tools/call",
  "resources/read",
  "prompts/get",
  "completion/complete",
];
const EXPECTED_CODE = {
  invalid: ProtocolErrorCode.InvalidParams,
  not_found: ProtocolErrorCode.InvalidParams,
  refused: ProtocolErrorCode.InternalError,
  unavailable: ProtocolErrorCode.InternalError,
  cancelled: ProtocolErrorCode.InternalError,
  internal: ProtocolErrorCode.InternalError,
};

describe("every failure through every method", () => {
  for (const [what, error, kind] of samples)
    for (const method of METHODS)
      it(`${what}: ${method}`, () => {
        const { logger, lines } = capturedLogger();
        const k = failureKind(error);
        if (kind) expect(k).toBe(kind);
        const run = () => failed(method, error, "the subject", logger);
        if (method === "tools/call") {
          const result = run() as { isError: boolean; content: Array<{ text: string }> };
          expect(result.isError).toBe(true);
          expect(result.content[0]!.text.length).toBeGreaterThan(10);
          expect(result.content[0]!.text).not.toContain("    at "); // never a stack
        } else if (method === "completion/complete") {
          expect(run()).toEqual({ completion: { values: [], hasMore: false } });
        } else {
          let thrown: unknown;
          try {
            run();
          } catch (e) {
            thrown = e;
          }
          expect(thrown).toBeInstanceOf(ProtocolError);
          if (k === "not_found" && method === "resources/read")
            expect(thrown).toBeInstanceOf(ResourceNotFoundError);
          else expect((thrown as ProtocolError).code).toBe(EXPECTED_CODE[k]);
          expect((thrown as Error).message).not.toContain("    at ");
        }
        // Logged once: at info for what the caller can act on, at warn otherwise.
        const logged = lines.map((l) => JSON.parse(l));
        expect(logged).toHaveLength(1);
        expect(logged[0].level).toBe(k === "unavailable" || k === "internal" ? 40 : 30);
      });

  it("lets a protocol error the handler raised itself through as it is", () => {
    const { logger } = capturedLogger();
    const own = new ProtocolError(ProtocolErrorCode.InvalidParams, "Unknown tool x.");
    expect(() => failed("tools/call", own, "x", logger)).toThrow(own);
  });

  it("tells a 503 as the API's failure, never as the caller's arguments (a prompt did)", () => {
    const { logger } = capturedLogger();
    const unavailable = new ApiError("HTTP 503", {
      code: "server_error",
      operationId: "operation_get",
      status: 503,
    });
    try {
      failed("prompts/get", unavailable, "operation_brief", logger);
    } catch (error) {
      expect((error as ProtocolError).code).toBe(ProtocolErrorCode.InternalError);
      expect((error as Error).message).toContain("failed on its side");
    }
  });
});
