import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import { NO_METRICS } from "../../src/telemetry/metrics.js";
import { Authenticator } from "../../src/transport/authenticate.js";
import { ClientRegistry } from "../../src/transport/clients.js";
import { allowedOrigins } from "../../src/transport/guard.js";
import { readMessage } from "../../src/transport/message.js";
import { LocalRateLimiter } from "../../src/transport/rate-limit.js";
import { Sessions } from "../../src/transport/sessions.js";
import {
  allowedMethod,
  authenticate,
  guard,
  openPaths,
  rate,
  stepUp,
} from "../../src/transport/steps.js";

/**
 * The steps of an HTTP request (src/transport/pipeline.ts), each tried alone: no server, no
 * socket, a request as node:http would hand it over (its method, URL, headers and body).
 */
const TOKEN = "pipeline-test-token";
const logger = createLogger({ level: "silent" });
const allowed = allowedOrigins({
  bindHost: "127.0.0.1",
  port: 8080,
  allowedHosts: [],
  allowedOrigins: [],
});

function request(
  method: string,
  headers: Record<string, string> = {},
  body?: string,
  url = "/mcp",
): IncomingMessage {
  const stream = Readable.from(body === undefined ? [] : [Buffer.from(body)]);
  return Object.assign(stream, {
    method,
    url,
    headers: { host: "127.0.0.1:8080", ...headers },
  }) as unknown as IncomingMessage;
}

const principal = { id: "desk", delegatedUser: null, readOnly: false, tools: null };

describe("the HTTP pipeline's steps, alone", () => {
  it("guard: a foreign Host or Origin is refused, our own passes", () => {
    expect(guard(request("POST"), { allowed })).toBeNull();
    expect(guard(request("POST", { host: "evil.example" }), { allowed })).toEqual({
      status: 403,
      message: "Host evil.example is not allowed.",
    });
    expect(guard(request("POST", { origin: "https://evil.example" }), { allowed })).toEqual({
      status: 403,
      message: "Origin https://evil.example is not allowed.",
    });
  });

  it("open paths: health without a token, anything else but /mcp not found, /mcp on to sign-in", async () => {
    const auth = new Authenticator(ClientRegistry.single(TOKEN, null), null, logger);
    const site = {
      auth,
      closing: false,
      ready: async () => ({ ready: false, reason: "the API refused the key" }),
      metrics: NO_METRICS,
    };
    expect(await openPaths(request("GET"), "/healthz", site)).toEqual({
      status: 200,
      json: { status: "ok" },
    });
    expect(await openPaths(request("GET"), "/readyz", site)).toEqual({
      status: 503,
      json: { status: "not ready", reason: "the API refused the key" },
    });
    expect(await openPaths(request("GET"), "/elsewhere", site)).toEqual({
      status: 404,
      message: "Not found; the MCP endpoint is /mcp.",
    });
    expect(await openPaths(request("POST"), "/mcp", site)).toBeNull();
    expect(await openPaths(request("POST"), "/mcp", { ...site, closing: true })).toMatchObject({
      status: 503,
      headers: { "Retry-After": "5" },
    });
  });

  it("authenticate: the client's token names it; another is refused and the refusal told", async () => {
    const auth = new Authenticator(ClientRegistry.single(TOKEN, null), null, logger);
    const told: unknown[] = [];
    const observer = { signInRefused: (event: unknown) => told.push(event) };
    const signedIn = await authenticate(request("POST", { authorization: `Bearer ${TOKEN}` }), {
      auth,
      observer,
    });
    expect(signedIn).toMatchObject({ principal: { id: "default" } });
    const refused = await authenticate(request("POST", { authorization: "Bearer wrong" }), {
      auth,
      observer,
    });
    expect(refused).toMatchObject({
      answer: { status: 401, headers: { "WWW-Authenticate": expect.stringMatching(/^Bearer/) } },
    });
    expect(told).toEqual([expect.objectContaining({ status: 401, principal: null })]);
  });

  it("method and rate: PUT is not a method of /mcp; past its share a client waits", async () => {
    expect(allowedMethod(request("DELETE"))).toBeNull();
    expect(allowedMethod(request("PUT"))).toEqual({
      status: 405,
      message: "Use POST, GET or DELETE on /mcp.",
      headers: { Allow: "GET, POST, DELETE" },
    });
    const limiter = new LocalRateLimiter(2, () => 0);
    expect(await rate(principal, 2, { limiter })).toBeNull();
    expect(await rate(principal, 1, { limiter })).toEqual({
      status: 429,
      message: "Too many requests for this client.",
      headers: { "Retry-After": "30" },
    });
  });

  it("message: a body past the cap, not JSON, or a batch of a revision without batches is refused", async () => {
    const sessions = new Sessions({
      maxSessions: 1,
      maxSessionsPerClient: 1,
      idleMs: 60_000,
      createServer: () => {
        throw new Error("no server is built in this test");
      },
      logger,
    });
    const steps = { maxBodyBytes: 64, sessions, limiter: new LocalRateLimiter(600) };
    const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    expect(await readMessage(request("POST", {}, call), principal, steps)).toEqual({
      body: JSON.parse(call),
    });
    expect(await readMessage(request("POST", {}, "x".repeat(65)), principal, steps)).toEqual({
      answer: { status: 413, message: "The body exceeds 64 bytes." },
    });
    expect(await readMessage(request("POST", {}, "{"), principal, steps)).toEqual({
      answer: { status: 400, rpc: { code: -32700, message: "Parse error: the body is not JSON." } },
    });
    const batch = request("POST", { "mcp-protocol-version": "2025-06-18" }, `[${call}]`);
    expect(await readMessage(batch, principal, steps)).toMatchObject({
      answer: { status: 400, rpc: { code: -32600 } },
    });
    expect(await readMessage(request("GET"), principal, steps)).toEqual({ body: undefined });
  });

  it("step-up: a token without portfolio:write calling a write tool is sent to sign in again", () => {
    const auth = new Authenticator(ClientRegistry.none(), null, logger);
    auth.locate("http://127.0.0.1:8080", null);
    const told: unknown[] = [];
    const steps = {
      auth,
      observer: { signInRefused: (event: unknown) => told.push(event) },
      isWriteTool: (name: string) => name === "draft_note",
    };
    const reader = {
      ...principal,
      oauth: { scopes: ["portfolio:read"], clientId: null, lacksWriteScope: true },
    };
    const call = (name: string) => ({ method: "tools/call", params: { name } });
    expect(stepUp(reader, call("list_operations"), steps)).toBeNull();
    expect(stepUp(principal, call("draft_note"), steps)).toBeNull();
    const refused = stepUp(reader, [call("list_operations"), call("draft_note")], steps);
    expect(refused).toMatchObject({ status: 403 });
    expect(refused && "message" in refused && refused.message).toMatch(
      /^draft_note writes, and the access token does not grant portfolio:write/,
    );
    expect(told).toEqual([{ reason: "scope", status: 403, principal: "http:desk" }]);
  });
});
