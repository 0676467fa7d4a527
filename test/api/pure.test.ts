import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { asListPage } from "../../src/api/response.js";
import {
  bearerExpiry,
  FALLBACK_LIFETIME_MS,
  parseExpiresAt,
  renewalMarginMs,
} from "../../src/auth/expiry.js";
import { exchangeMessage, newNonce, signExchange } from "../../src/auth/signer.js";
import { ApiError, errorFromResponse } from "../../src/http/errors.js";
import {
  DEFAULT_RETRY_POLICY,
  isRetryable,
  parseRetryAfter,
  retryDelayMs,
  shouldRetry,
} from "../../src/http/retry.js";
import { SecretRedactor } from "../../src/log.js";

describe("signing (spec part 5)", () => {
  it("signs four lines joined by \\n with no trailing newline", () => {
    const message = exchangeMessage(
      "SERVICE-EXTERNAL-API-TOKEN-V1",
      "acme2026",
      1_700_000_000,
      "n".repeat(16),
    );
    expect(message).toBe(`SERVICE-EXTERNAL-API-TOKEN-V1\nacme2026\n1700000000\n${"n".repeat(16)}`);
    const expected = createHmac("sha256", "secret").update(message).digest("hex");
    expect(signExchange("secret", message)).toBe(expected);
    expect(signExchange("secret", message)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("draws a fresh nonce of the allowed alphabet and length every time", () => {
    const nonces = new Set(Array.from({ length: 1000 }, newNonce));
    expect(nonces.size).toBe(1000);
    for (const nonce of nonces) expect(nonce).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
  });
});

describe("bearer expiry", () => {
  const received = Date.parse("2026-11-21T10:00:00Z");
  it.each([
    ["an ISO date", "2026-11-21T10:15:00Z", Date.parse("2026-11-21T10:15:00Z")],
    ["Unix seconds", 1_795_256_100, 1_795_256_100_000],
    ["Unix milliseconds", 1_795_256_100_000, 1_795_256_100_000],
    ["Unix seconds as a string", "1795256100", 1_795_256_100_000],
  ])("reads expires_at as %s", (_case, value, expected) => {
    expect(parseExpiresAt(value)).toBe(expected);
  });

  it("ignores what it cannot read", () => {
    expect(parseExpiresAt("soon")).toBeNull();
    expect(parseExpiresAt(-5)).toBeNull();
    expect(parseExpiresAt(null)).toBeNull();
  });

  it("takes the earlier of expires_at and expires_in, shifted by the server's clock offset", () => {
    expect(
      bearerExpiry({
        expiresAt: "2026-11-21T10:15:00Z",
        expiresIn: 900,
        receivedAtMs: received,
        serverOffsetMs: 0,
      }),
    ).toBe(received + 900_000);
    expect(
      bearerExpiry({
        expiresAt: "2026-11-21T10:05:00Z",
        expiresIn: 900,
        receivedAtMs: received,
        serverOffsetMs: 0,
      }),
    ).toBe(received + 300_000);
    // Server 10 minutes ahead: its 10:25 is our 10:15.
    expect(
      bearerExpiry({
        expiresAt: "2026-11-21T10:25:00Z",
        expiresIn: undefined,
        receivedAtMs: received,
        serverOffsetMs: 600_000,
      }),
    ).toBe(received + 900_000);
    expect(
      bearerExpiry({
        expiresAt: undefined,
        expiresIn: "60",
        receivedAtMs: received,
        serverOffsetMs: 0,
      }),
    ).toBe(received + 60_000);
    expect(
      bearerExpiry({
        expiresAt: undefined,
        expiresIn: undefined,
        receivedAtMs: received,
        serverOffsetMs: 0,
      }),
    ).toBe(received + FALLBACK_LIFETIME_MS);
  });

  it("renews a tenth of the lifetime early, between 1 s and 60 s", () => {
    expect(renewalMarginMs(900_000)).toBe(60_000);
    expect(renewalMarginMs(60_000)).toBe(6_000);
    expect(renewalMarginMs(2_000)).toBe(1_000);
  });
});

describe("retry policy", () => {
  it("retries network failures and 429/502/503/504, nothing else", () => {
    for (const status of [429, 502, 503, 504])
      expect(isRetryable({ kind: "status", status })).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 422, 500, 501])
      expect(isRetryable({ kind: "status", status })).toBe(false);
    expect(isRetryable({ kind: "network", code: "connection" })).toBe(true);
    expect(isRetryable({ kind: "network", code: "aborted" })).toBe(false);
  });

  it("stops at the retry budget and at the time budget", () => {
    const outcome = { kind: "status" as const, status: 503 };
    const policy = DEFAULT_RETRY_POLICY;
    expect(shouldRetry({ outcome, retriesSoFar: 2, elapsedMs: 0, nextDelayMs: 100, policy })).toBe(
      true,
    );
    expect(shouldRetry({ outcome, retriesSoFar: 3, elapsedMs: 0, nextDelayMs: 100, policy })).toBe(
      false,
    );
    expect(
      shouldRetry({ outcome, retriesSoFar: 0, elapsedMs: 59_950, nextDelayMs: 100, policy }),
    ).toBe(false);
  });

  it("backs off with full jitter, and honours Retry-After with a little added", () => {
    const policy = DEFAULT_RETRY_POLICY;
    expect(retryDelayMs(0, null, policy, () => 0.999)).toBeLessThan(250);
    expect(retryDelayMs(3, null, policy, () => 0.5)).toBe(1_000);
    expect(retryDelayMs(10, null, policy, () => 0.999)).toBeLessThan(8_000);
    expect(retryDelayMs(0, 2_000, policy, () => 0)).toBe(2_000);
    expect(retryDelayMs(0, 2_000, policy, () => 0.999)).toBeLessThanOrEqual(2_200);
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    expect(parseRetryAfter("2", now)).toBe(2_000);
    expect(parseRetryAfter("Sat, 21 Nov 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sat, 21 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});

describe("list envelopes", () => {
  it("accepts a bare array or an object holding items, data or results", () => {
    expect(asListPage([1, 2])).toEqual({ items: [1, 2], total: 2 });
    expect(asListPage({ items: [1], total: 40 })).toEqual({ items: [1], total: 40 });
    expect(asListPage({ data: [1, 2, 3], count: 9 })).toEqual({ items: [1, 2, 3], total: 9 });
    expect(asListPage({ results: [] })).toEqual({ items: [], total: 0 });
    expect(() => asListPage({ rows: [] })).toThrow("not a list");
  });
});

describe("error factory", () => {
  it("maps statuses to stable codes and keeps the problem's fields", () => {
    const error = errorFromResponse({
      operationId: "deals_list",
      requestId: "local-id",
      status: 403,
      contentType: "application/problem+json",
      body: Buffer.from(
        JSON.stringify({
          title: "Forbidden",
          status: 403,
          detail: "No.",
          scope: "deals:read",
          reason_code: "insufficient_scope",
          request_id: "srv-id",
        }),
      ),
    });
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: "forbidden",
      scope: "deals:read",
      reasonCode: "insufficient_scope",
      requestId: "srv-id",
    });
    const plain = errorFromResponse({
      operationId: "x",
      requestId: "r",
      status: 503,
      contentType: "",
      body: Buffer.alloc(0),
    });
    expect(plain).toMatchObject({ code: "server_error", requestId: "r" });
  });
});

describe("log redaction", () => {
  it("censors sensitive keys at any depth and scrubs known secret values from strings", () => {
    const redactor = new SecretRedactor();
    redactor.add("sbx_the-bearer-token");
    const out = redactor.redact({
      headers: { Authorization: "Bearer abc.def", "x-request-id": "r1" },
      nested: { deeper: { share_token: "shr_1", signature: "ff" } },
      message: "used sbx_the-bearer-token then Bearer xyz",
      list: [{ access_token: "t" }],
    });
    expect(JSON.stringify(out)).not.toMatch(/abc\.def|shr_1|"ff"|sbx_the-bearer-token|xyz|"t"/);
    expect(out).toMatchObject({ headers: { "x-request-id": "r1" } });
  });
});
