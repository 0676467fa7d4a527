import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importJWK, type JWK, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { resolveRoutes } from "../../src/api/routes.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { signInRows } from "../../src/doctor.js";
import { discoverIssuer, TokenVerifier } from "../../src/transport/oauth.js";

/**
 * The token checks on their own, against a tiny authorization server of the test's making: its
 * metadata at a chosen address, its JWKS whose keys the test rotates, and a count of fetches.
 */
interface FakeIssuer {
  issuer: string;
  keys: Array<JWK & { kid: string }>;
  jwksFetches: number;
  /** Where the metadata is served: RFC 8414, OpenID Connect, or nowhere. */
  metadataAt: "oauth" | "openid" | "none";
  /** What the metadata says the issuer is (default: the real one). */
  claimedIssuer?: string;
}

const running: Server[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function newKey(kid: string) {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { ...(privateKey.export({ format: "jwk" }) as JWK), kid, alg: "RS256" };
}
const publicPart = ({ kty, n, e, kid, alg }: JWK) => ({ kty, n, e, kid, alg, use: "sig" });

async function fakeIssuer(path = ""): Promise<FakeIssuer> {
  const state = {
    keys: [newKey("k1")],
    jwksFetches: 0,
    metadataAt: "oauth" as FakeIssuer["metadataAt"],
    claimedIssuer: undefined as string | undefined,
  };
  let issuer = "";
  const server = createServer((req, res) => {
    const metadata = {
      issuer: state.claimedIssuer ?? issuer,
      jwks_uri: `${new URL(issuer).origin}/keys`,
    };
    if (req.url === "/keys") {
      state.jwksFetches++;
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ keys: state.keys.map(publicPart) }));
    }
    const served =
      (state.metadataAt === "oauth" &&
        req.url === `/.well-known/oauth-authorization-server${path}`) ||
      (state.metadataAt === "openid" && req.url === `${path}/.well-known/openid-configuration`);
    if (served) {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(metadata));
    }
    res.writeHead(404).end();
  });
  running.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return Object.assign(state, { issuer });
}

const AUDIENCE = "https://mcp.example.com/mcp";
async function sign(as: FakeIssuer, key: JWK & { kid: string }, claims: object = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: as.issuer,
    aud: AUDIENCE,
    sub: "someone",
    exp: now + 300,
    scope: "portfolio:read",
    ...claims,
  })
    .setProtectedHeader({ alg: "RS256", kid: key.kid })
    .sign(await importJWK(key, "RS256"));
}

describe("issuer discovery", () => {
  it("finds RFC 8414 metadata (path-inserted) or OpenID Connect discovery (appended)", async () => {
    const oauth = await fakeIssuer("/realms/team");
    expect((await discoverIssuer(oauth.issuer)).source).toBe(
      `${new URL(oauth.issuer).origin}/.well-known/oauth-authorization-server/realms/team`,
    );
    const openid = await fakeIssuer("/realms/team");
    openid.metadataAt = "openid";
    expect((await discoverIssuer(openid.issuer)).source).toBe(
      `${openid.issuer}/.well-known/openid-configuration`,
    );
  });

  it("refuses, naming the setting, an issuer without metadata or whose metadata names another", async () => {
    const none = await fakeIssuer();
    none.metadataAt = "none";
    const missing = await discoverIssuer(none.issuer).catch((e: unknown) => e as Error);
    expect(missing).toBeInstanceOf(ConfigError);
    expect((missing as Error).message).toMatch(
      /^PORTFOLIO_OAUTH_ISSUER \(http:\/\/127\.0\.0\.1:\d+\): no authorization server metadata could be read \(.*HTTP 404.*\); check the URL/,
    );
    const other = await fakeIssuer();
    other.claimedIssuer = `${other.issuer}/`;
    await expect(discoverIssuer(other.issuer)).rejects.toThrow(
      `names the issuer "${other.issuer}/"; set PORTFOLIO_OAUTH_ISSUER to exactly that value`,
    );
    await expect(discoverIssuer("http://127.0.0.1:9")).rejects.toThrow(
      /no authorization server metadata could be read/,
    );
  });
});

describe("the issuer's keys", () => {
  it("are fetched once and cached; a new kid after a rotation is fetched, at most once per cooldown", async () => {
    const as = await fakeIssuer();
    const rotated = newKey("k2");
    const strangers = ["x1", "x2", "x3"].map(newKey);
    const { verifier } = await TokenVerifier.discover(as.issuer, { cooldownMs: 1_000 });
    const first = as.keys[0]!;
    for (let i = 0; i < 3; i++)
      expect((await verifier.verify(await sign(as, first), AUDIENCE)).ok).toBe(true);
    expect(as.jwksFetches).toBe(1);

    // The issuer rotates: a token with the new kid makes the server look again, once.
    await new Promise((r) => setTimeout(r, 1_050));
    as.keys = [rotated, first];
    expect((await verifier.verify(await sign(as, rotated), AUDIENCE)).ok).toBe(true);
    expect(as.jwksFetches).toBe(2);

    // A burst of unknown kids cannot make it fetch again within the cooldown.
    const tokens = await Promise.all(strangers.map((key) => sign(as, key)));
    const verdicts = await Promise.all(tokens.map((token) => verifier.verify(token, AUDIENCE)));
    for (const verdict of verdicts)
      expect(verdict).toMatchObject({ ok: false, problem: "unknown_key" });
    expect(as.jwksFetches).toBe(2);
  });

  it("when they cannot be fetched, the verdict is 'unavailable', not a bad token", async () => {
    const as = await fakeIssuer();
    const { verifier } = await TokenVerifier.discover(as.issuer);
    const token = await sign(as, as.keys[0]!);
    for (const server of running.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await verifier.verify(token, AUDIENCE)).toMatchObject({
      ok: false,
      problem: "keys_unavailable",
    });
  });

  it("reads scopes from scope (RFC 9068) or scp, and requires sub and exp", async () => {
    const as = await fakeIssuer();
    const { verifier } = await TokenVerifier.discover(as.issuer);
    const key = as.keys[0]!;
    const scopes = async (claims: object) => {
      const verdict = await verifier.verify(await sign(as, key, claims), AUDIENCE);
      return verdict.ok ? [...verdict.scopes] : verdict.problem;
    };
    expect(await scopes({ scope: "portfolio:read portfolio:write" })).toEqual([
      "portfolio:read",
      "portfolio:write",
    ]);
    expect(await scopes({ scope: undefined, scp: ["portfolio:read"] })).toEqual(["portfolio:read"]);
    expect(await scopes({ sub: undefined })).toBe("claims");
    // Several audiences, ours among them, are accepted (RFC 9068 allows a list).
    expect(await scopes({ aud: ["https://other.example", AUDIENCE] })).toEqual(["portfolio:read"]);
  });
});

describe("doctor", () => {
  const configFor = (issuer: string, users: unknown) => {
    const file = join(mkdtempSync(join(tmpdir(), "doctor-users-")), "users.json");
    writeFileSync(file, JSON.stringify(users));
    return loadConfig({
      env: {
        PORTFOLIO_API_BASE_URL: "https://api.example.com/v1",
        PORTFOLIO_API_KEY_ID: "demokey",
        PORTFOLIO_API_SECRET: "s3cret",
        PORTFOLIO_OAUTH_ISSUER: issuer,
        PORTFOLIO_OAUTH_USERS_FILE: file,
        PORTFOLIO_PUBLIC_URL: "https://mcp.example.com",
      },
    });
  };
  const routes = { routes: resolveRoutes(null) };
  const camille = { email: "camille.martin@aurore-capital.example" };

  it("checks the users file, the audience, the issuer's metadata and its keys", async () => {
    const as = await fakeIssuer();
    const rows = await signInRows(
      configFor(as.issuer, { users: [{ email: "a@example.test", delegated_user: camille }] }),
      routes,
    );
    expect(rows.map((r) => [r.check, r.status])).toEqual([
      ["sign-in users", "ok"],
      ["sign-in audience", "ok"],
      ["sign-in issuer", "ok"],
      ["sign-in keys", "ok"],
    ]);
    expect(rows[0]!.detail).toMatch(/^1 user\(s\) in .*users\.json, keyed by the email claim$/);
    expect(rows[1]!.detail).toBe("access tokens must be issued for https://mcp.example.com/mcp");
    expect(rows[3]!.detail).toBe(`1 signing key(s) at ${new URL(as.issuer).origin}/keys`);
  });

  it("fails the rows that cannot work, saying why", async () => {
    const rows = await signInRows(configFor("http://127.0.0.1:9", { users: [] }), routes);
    expect(rows.map((r) => [r.check, r.status])).toEqual([
      ["sign-in users", "failed"],
      ["sign-in audience", "ok"],
      ["sign-in issuer", "failed"],
    ]);
    expect(rows[0]!.detail).toContain("users must have at least one item");
    expect(rows[2]!.detail).toContain("no authorization server metadata could be read");
  });
});
