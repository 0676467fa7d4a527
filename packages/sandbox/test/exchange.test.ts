import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { DEMO_KEYS, startSandbox } from "../src/index.js";
import { PartnerTestClient, signedExchange } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox();

describe("token exchange (spec part 5)", () => {
  it("issues a bearer with access_token, expires_in, expires_at and environment", async () => {
    const before = Date.now();
    const reply = await env.client.exchange();
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      token_type: "Bearer",
      expires_in: 900,
      environment: "sandbox",
    });
    expect(reply.body.access_token).toMatch(/^sbx_[A-Za-z0-9_-]{20,}$/);
    const expiresAt = Date.parse(reply.body.expires_at);
    expect(expiresAt - before).toBeGreaterThanOrEqual(899_000);
    expect(expiresAt - before).toBeLessThan(905_000);
  });

  it("refuses a signature made with the wrong secret, and an unknown key id, with 401", async () => {
    const wrongSecret = await env.client.exchange(
      signedExchange({ keyId: "sandboxdemo", secret: "nope" }),
    );
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body).toMatchObject({ status: 401, reason_code: "invalid_signature" });
    expect(wrongSecret.headers.get("content-type")).toContain("application/problem+json");
    const unknownKey = await env.client.exchange(
      signedExchange({ keyId: "nosuchkey", secret: "x" }),
    );
    expect(unknownKey.status).toBe(401);
    expect(unknownKey.body.reason_code).toBe("invalid_signature");
  });

  it.each([
    ["key_id", { key_id: "abc" }, "pattern"],
    ["key_id", { key_id: "UPPERCASE" }, "pattern"],
    ["key_id", { key_id: "a".repeat(25) }, "pattern"],
    ["timestamp", { timestamp: -1 }, "min 0"],
    ["timestamp", { timestamp: 1.5 }, "type int"],
    ["timestamp", { timestamp: "1700000000" }, "type number"],
    ["nonce", { nonce: "a".repeat(15) }, "pattern"],
    ["nonce", { nonce: "a".repeat(129) }, "pattern"],
    ["nonce", { nonce: `${"a".repeat(16)}!` }, "pattern"],
    ["signature", { signature: "a".repeat(63) }, "pattern"],
    ["signature", { signature: "g".repeat(64) }, "pattern"],
    ["signature", { signature: undefined }, "required"],
    ["extra", { extra: 1 }, "unknown field"],
  ])(
    "refuses an invalid %s with 422 naming the field and rule (%j)",
    async (field, patch, rule) => {
      const fields = { ...signedExchange(env.sandbox.credentials), ...patch };
      const reply = await env.client.exchange(JSON.parse(JSON.stringify(fields)));
      expect(reply.status).toBe(422);
      expect(reply.body.detail).toContain(field);
      expect(reply.body.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ field, rule: expect.stringContaining(rule) }),
        ]),
      );
    },
  );

  it("accepts a timestamp inside the clock window and refuses one outside it, with the server Date", async () => {
    const now = Math.floor(Date.now() / 1000);
    const inside = await env.client.exchange(
      signedExchange(env.sandbox.credentials, { timestamp: now - 290 }),
    );
    expect(inside.status).toBe(200);
    const outside = await env.client.exchange(
      signedExchange(env.sandbox.credentials, { timestamp: now + 310 }),
    );
    expect(outside.status).toBe(401);
    expect(outside.body.reason_code).toBe("timestamp_out_of_window");
    const serverDate = Date.parse(outside.headers.get("date") ?? "");
    expect(Math.abs(serverDate - Date.now())).toBeLessThan(5_000);
  });

  it("refuses a reused nonce and a replayed signed payload", async () => {
    const fields = signedExchange(env.sandbox.credentials);
    expect((await env.client.exchange(fields)).status).toBe(200);
    const replay = await env.client.exchange(fields);
    expect(replay.status).toBe(401);
    expect(replay.body.reason_code).toBe("signature_replayed");
    const sameNonce = signedExchange(env.sandbox.credentials, {
      nonce: fields.nonce,
      timestamp: fields.timestamp - 1,
    });
    const reused = await env.client.exchange(sameNonce);
    expect(reused.status).toBe(401);
    expect(reused.body.reason_code).toBe("nonce_reused");
  });

  it("refuses GET on the token route, non-JSON bodies and malformed JSON", async () => {
    const get = await fetch(`${env.sandbox.baseUrl}/auth/token`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    const text = await fetch(`${env.sandbox.baseUrl}/auth/token`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "key_id=x",
    });
    expect(text.status).toBe(415);
    const malformed = await fetch(`${env.sandbox.baseUrl}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(malformed.status).toBe(422);
    expect(((await malformed.json()) as { reason_code: string }).reason_code).toBe("invalid_json");
  });
});

describe("bearers on business routes", () => {
  it("answers 401 with WWW-Authenticate when the bearer is missing, unknown or expired", async () => {
    const missing = await env.client.get("/operations", { bearer: null });
    expect(missing.status).toBe(401);
    expect(missing.body.reason_code).toBe("missing_token");
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer /);
    const unknown = await env.client.get("/operations", { bearer: "sbx_not-a-real-token" });
    expect(unknown.status).toBe(401);
    expect(unknown.body.reason_code).toBe("invalid_token");
  });

  it("expires every bearer on demand", async () => {
    const own = new PartnerTestClient(env.sandbox.baseUrl, env.sandbox.credentials);
    expect((await own.get("/taxonomies")).status).toBe(200);
    expect(env.sandbox.control.expireAllBearers()).toBeGreaterThan(0);
    const after = await own.get("/taxonomies");
    expect(after.status).toBe(401);
    expect(after.body.reason_code).toBe("invalid_token");
  });
});

describe("exchange settings", () => {
  it("uses the configured prefix, window, lifetime and expires_at format", async () => {
    const custom = await startSandbox({
      tokenPrefix: "ACME-EXTERNAL-API-TOKEN-V1",
      clockWindowSeconds: 10,
      tokenTtlSeconds: 1,
      expiresAtFormat: "unix",
    });
    try {
      const c = new PartnerTestClient(custom.baseUrl, custom.credentials);
      const defaultPrefix = await c.exchange(signedExchange(custom.credentials));
      expect(defaultPrefix.status).toBe(401);
      const ok = await c.exchange(
        signedExchange(custom.credentials, { prefix: "ACME-EXTERNAL-API-TOKEN-V1" }),
      );
      expect(ok.status).toBe(200);
      expect(ok.body.expires_in).toBe(1);
      expect(Number.isInteger(ok.body.expires_at)).toBe(true);
      expect(Math.abs(ok.body.expires_at - (Date.now() / 1000 + 1))).toBeLessThan(3);
      const stale = await c.exchange(
        signedExchange(custom.credentials, {
          prefix: "ACME-EXTERNAL-API-TOKEN-V1",
          timestamp: Math.floor(Date.now() / 1000) - 30,
        }),
      );
      expect(stale.body.reason_code).toBe("timestamp_out_of_window");

      await sleep(1_100);
      const expired = await c.get("/taxonomies", { bearer: ok.body.access_token });
      expect(expired.status).toBe(401);
      expect(expired.body.reason_code).toBe("token_expired");
    } finally {
      await custom.close();
    }
  });

  it("can write expires_at in Unix milliseconds", async () => {
    const custom = await startSandbox({ expiresAtFormat: "unix-ms" });
    try {
      const reply = await new PartnerTestClient(custom.baseUrl, custom.credentials).exchange();
      expect(Math.abs(reply.body.expires_at - (Date.now() + 900_000))).toBeLessThan(5_000);
    } finally {
      await custom.close();
    }
  });

  it("shows a skewed server clock in its Date header and judges timestamps by it", async () => {
    env.sandbox.control.skewClock(600);
    try {
      const reply = await env.client.exchange(signedExchange(env.sandbox.credentials));
      expect(reply.status).toBe(401);
      expect(reply.body.reason_code).toBe("timestamp_out_of_window");
      const serverNow = Date.parse(reply.headers.get("date") ?? "") / 1000;
      expect(Math.abs(serverNow - (Date.now() / 1000 + 600))).toBeLessThan(3);
      const corrected = await env.client.exchange(
        signedExchange(env.sandbox.credentials, { timestamp: Math.floor(serverNow) }),
      );
      expect(corrected.status).toBe(200);
    } finally {
      env.sandbox.control.skewClock(0);
    }
  });

  it("refuses the exchange from an address outside the key's IP allowlist", async () => {
    env.sandbox.control.updateKey(DEMO_KEYS.readOnly.keyId, { ips: ["10.0.0.0/8"] });
    try {
      const reply = await env.client.exchange(signedExchange(DEMO_KEYS.readOnly));
      expect(reply.status).toBe(403);
      expect(reply.body.reason_code).toBe("ip_not_allowed");
    } finally {
      env.sandbox.control.updateKey(DEMO_KEYS.readOnly.keyId, { ips: undefined });
    }
  });
});
