import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/server";
import type { Observer } from "../events.js";
import type { Verdict } from "../readiness.js";
import type { Metrics } from "../telemetry/metrics.js";
import type { Authenticator } from "./authenticate.js";
import type { Principal } from "./clients.js";
import { dispatch } from "./dispatch.js";
import { readMessage } from "./message.js";
import type { RateLimiter } from "./rate-limit.js";
import { answer } from "./replies.js";
import type { Sessions } from "./sessions.js";
import { allowedMethod, authenticate, guard, openPaths, rate, stepUp } from "./steps.js";

/**
 * What the steps of one HTTP request work with, made once per server (http.ts). Each step
 * takes only the parts it needs, so that it can be tried alone, without a server.
 */
export interface Pipeline {
  /** Host and Origin values this server answers to (known for certain once it listens). */
  allowed: { hosts: Set<string>; origins: Set<string> };
  /** Set when the server is shutting down: new calls are refused. */
  closing: boolean;
  auth: Authenticator;
  limiter: RateLimiter;
  sessions: Sessions;
  /** Told of every refused sign-in (the audit trail, the metrics). */
  observer?: Observer;
  isWriteTool(name: string): boolean;
  maxBodyBytes: number;
  ready(): Promise<Verdict>;
  metrics: Metrics;
  stateless: boolean;
  /** Answers a 2026-07-28 request (a fresh server each, the SDK's handler). */
  modern(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  createServer(principal: Principal, sessionId: string | null): Server;
}

/**
 * One request through the steps, in order; the first that answers ends it: Host and Origin
 * (403), the paths open to anyone, the bearer (401), the method (405), the client's rate
 * (429), the body (413, 400, a batch's rate), a write tool's scope (403), then the MCP server
 * that answers it.
 */
export async function handle(req: IncomingMessage, res: ServerResponse, p: Pipeline) {
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const early = guard(req, p) ?? (await openPaths(req, path, p));
  if (early) return answer(res, early);
  const signedIn = await authenticate(req, p);
  if ("answer" in signedIn) return answer(res, signedIn.answer);
  const { principal } = signedIn;
  const refused = allowedMethod(req) ?? (await rate(principal, 1, p));
  if (refused) return answer(res, refused);
  const message = await readMessage(req, principal, p);
  if ("answer" in message) return answer(res, message.answer);
  const unscoped = stepUp(principal, message.body, p);
  if (unscoped) return answer(res, unscoped);
  return dispatch(req, res, message.body, principal, p);
}
