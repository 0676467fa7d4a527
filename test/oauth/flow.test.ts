import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  discoverOAuthProtectedResourceMetadata,
  InsufficientScopeError,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { DEMO_USERS, type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import type { JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  followAuthorization,
  type RunningAuthServer,
  startAuthServer,
  type TestAccount,
} from "../../scripts/lib/oauth-server.mjs";
import {
  clientFor,
  connectWith,
  forgeToken,
  signIn,
  TestOAuthProvider,
  unsignedToken,
} from "../helpers/oauth.js";
import { initializeRequest, MCP_HEADERS } from "../helpers/raw.js";
import { startShared } from "../helpers/shared.js";

/**
 * The shared deployment as an OAuth 2.1 protected resource, against a real authorization
 * server (oidc-provider on loopback) and the MCP SDK client's own OAuth support: discovery from
 * the 401, metadata, dynamic registration, authorization code with PKCE, a token for this
 * resource; then who may do what, and every refusal with nothing sent upstream.
 */
const CAMILLE = { email: "camille.martin@aurore-capital.example" };
const ALICE: TestAccount = { id: "alice-sub", email: "alice@example.test" };
const BOB: TestAccount = { id: "bob-sub", email: "Bob@Example.test" };
const READER: TestAccount = {
  id: "reader-sub",
  email: "reader@example.test",
  scopes: "portfolio:read",
};
const CAROL: TestAccount = { id: "carol-sub", email: "carol@example.test" };
const DAVE: TestAccount = { id: "dave-sub", email: "dave@example.test", email_verified: false };
const ERIN: TestAccount = { id: "erin-sub", email: "erin@example.test" };
/** Acts for the same delegated user as Alice: only who signed in tells them apart. */
const MALLORY: TestAccount = { id: "mallory-sub", email: "mallory@example.test" };
const AUTOMATION = "nightly-automation-token-0123456789";

let sandbox: Sandbox;
let as: RunningAuthServer;
let shared: Awaited<ReturnType<typeof startShared>>;
let url: string;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  as = await startAuthServer({ accounts: [ALICE, BOB, READER, CAROL, DAVE, ERIN, MALLORY] });
  const usersFile = join(mkdtempSync(join(tmpdir(), "oauth-users-")), "users.json");
  writeFileSync(
    usersFile,
    JSON.stringify({
      users: [
        { email: ALICE.email, delegated_user: CAMILLE },
        // Listed in another case than the identity provider writes it: e-mails match anyway.
        { email: "bob@example.test", delegated_user: { id: DEMO_USERS.julien } },
        { email: READER.email, delegated_user: CAMILLE },
        { email: MALLORY.email, delegated_user: CAMILLE },
        { email: DAVE.email, delegated_user: CAMILLE },
        // On our list, but not on the API key's allowlist of delegated users.
        { email: ERIN.email, delegated_user: { id: DEMO_USERS.thomas } },
      ],
    }),
  );
  shared = await startShared(
    sandbox,
    [
      {
        name: "nightly",
        token: AUTOMATION,
        delegated_user: { id: DEMO_USERS.julien },
        read_only: true,
      },
    ],
    {
      PORTFOLIO_OAUTH_ISSUER: as.issuer,
      PORTFOLIO_OAUTH_USERS_FILE: usersFile,
      PORTFOLIO_CONFIRM: "auto",
      PORTFOLIO_LOG_LEVEL: "info",
    },
  );
  url = shared.url;
});
afterAll(async () => {
  await shared?.stop();
  await as?.close();
  await sandbox?.close();
});

type Reply = { structuredContent: any; isError?: boolean; content: any[] };
const metadataUrl = () => `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`;
const challenge = () =>
  `Bearer scope="portfolio:read portfolio:write", resource_metadata="${metadataUrl()}"`;
const initialize = JSON.stringify(initializeRequest);
const withToken = (token: string, body = initialize, extra: Record<string, string> = {}) =>
  shared.raw("POST", "/mcp", { ...MCP_HEADERS, authorization: `Bearer ${token}`, ...extra }, body);
/** What reached the Partner API since `mark`. */
const upstream = (mark: number) => sandbox.control.requests({ since: mark });

describe("discovery", () => {
  it("answers /mcp without a token with the challenge, and publishes valid metadata at both addresses", async () => {
    const mark = sandbox.control.mark();
    const bare = await shared.raw("POST", "/mcp", MCP_HEADERS, initialize);
    expect(bare.status).toBe(401);
    expect(bare.headers["www-authenticate"]).toBe(challenge());
    const expected = {
      resource: url,
      authorization_servers: [as.issuer],
      scopes_supported: ["portfolio:read", "portfolio:write"],
      bearer_methods_supported: ["header"],
      resource_name: "Portfolio (Partner API)",
    };
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      const doc = await shared.raw("GET", path);
      expect(doc.status, path).toBe(200);
      expect(doc.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(doc.body)).toEqual(expected);
    }
    // The SDK's own reader of RFC 9728 documents accepts it, as a client will.
    const parsed = await discoverOAuthProtectedResourceMetadata(url, {
      resourceMetadataUrl: new URL(metadataUrl()),
    });
    expect(parsed).toMatchObject(expected);
    // Reachable without a token, but not from a foreign Host (DNS rebinding).
    const foreign = await shared.raw("GET", "/.well-known/oauth-protected-resource/mcp", {
      host: "evil.example",
    });
    expect(foreign.status).toBe(403);
    expect(upstream(mark)).toEqual([]);
  });
});

describe("signing in with the SDK client", () => {
  it("a 2025 session: discovery, registration, PKCE, a token for this resource; calls act as the mapped user", async () => {
    const provider = new TestOAuthProvider("alice-desktop");
    const { client } = await signIn(url, provider, ALICE.email);
    try {
      const asked = provider.authorizationUrl!.searchParams;
      expect(asked.get("code_challenge_method")).toBe("S256");
      expect(asked.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(asked.get("resource")).toBe(url);
      // The challenge's scopes (the SDK adds offline_access for a refresh token).
      expect(asked.get("scope")?.split(" ")).toEqual(
        expect.arrayContaining(["portfolio:read", "portfolio:write"]),
      );
      expect(provider.claims()).toMatchObject({
        iss: as.issuer,
        aud: url,
        sub: ALICE.id,
        email: ALICE.email,
        scope: "portfolio:read portfolio:write",
      });

      const mark = sandbox.control.mark();
      const views = (await client.callTool({
        name: "list_my_saved_views",
        arguments: {},
      })) as Reply;
      expect(views.structuredContent.total).toBe(3); // Camille's
      const reads = sandbox.control.requests({ since: mark, routeId: "saved_views_list" });
      expect(reads.map((e) => e.headers["x-service-delegated-user-email"])).toEqual([
        CAMILLE.email,
      ]);

      // A write, drafted and confirmed in two steps (this client shows no form), sent as Camille.
      const draft = (await client.callTool({
        name: "create_custom_dashboard",
        arguments: { name: "Tableau d'Alice" },
      })) as Reply;
      const done = (await client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: draft.structuredContent.confirmation_id },
      })) as Reply;
      expect(done.structuredContent.status).toBe("succeeded");
      const writes = sandbox.control.requests({ since: mark, routeId: "custom_dashboard_create" });
      expect(writes.map((e) => e.headers["x-service-delegated-user-email"])).toEqual([
        CAMILLE.email,
      ]);
    } finally {
      await client.close();
    }
  });

  it("a 2026-07-28 client signs in the same way and is the same user", async () => {
    const provider = new TestOAuthProvider("bob-web");
    const { client } = await signIn(url, provider, "bob@example.test", "2026");
    try {
      const mark = sandbox.control.mark();
      const views = (await client.callTool({
        name: "list_my_saved_views",
        arguments: {},
      })) as Reply;
      expect(views.isError).toBeFalsy();
      const reads = sandbox.control.requests({ since: mark, routeId: "saved_views_list" });
      expect(reads.map((e) => e.headers["x-service-delegated-user-id"])).toEqual([
        DEMO_USERS.julien,
      ]);
    } finally {
      await client.close();
    }
  });

  it("a read-only grant gets the read surface; a write tool called by name is a 403 step-up, and the SDK's step-up signs in again", async () => {
    const provider = new TestOAuthProvider("reader-app");
    const { client } = await signIn(url, provider, READER.email);
    try {
      expect(provider.claims().scope).toBe("portfolio:read");
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("list_operations");
      expect(names).not.toContain("create_custom_dashboard");
      expect(names).not.toContain("confirm_write");

      // By hand: the MCP authorization spec's scope challenge, nothing sent upstream.
      const mark = sandbox.control.mark();
      for (const name of ["create_custom_dashboard", "confirm_write"]) {
        const call = await withToken(
          provider.accessToken,
          JSON.stringify({
            jsonrpc: "2.0",
            id: 5,
            method: "tools/call",
            params: { name, arguments: {} },
          }),
          { "mcp-protocol-version": "2025-06-18" },
        );
        expect(call.status, name).toBe(403);
        expect(call.headers["www-authenticate"]).toBe(
          `Bearer error="insufficient_scope", scope="portfolio:read portfolio:write", resource_metadata="${metadataUrl()}"`,
        );
        expect(call.body).toContain(`${name} writes`);
      }
      expect(upstream(mark)).toEqual([]);

      // The SDK, told to throw, reports the scope it must ask for.
      const strict = new StreamableHTTPClientTransport(new URL(url), {
        authProvider: provider,
        onInsufficientScope: "throw",
      });
      const { client: direct } = clientFor(url, provider);
      await direct.connect(strict);
      const refused = await direct
        .callTool({ name: "create_custom_dashboard", arguments: { name: "x" } })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InsufficientScopeError);
      expect((refused as InsufficientScopeError).requiredScope).toBe(
        "portfolio:read portfolio:write",
      );
      await direct.close();

      // The identity provider now grants writing: the SDK's own step-up (re-authorization with
      // the wider scope) and a new session get the write surface.
      READER.scopes = "portfolio:read portfolio:write";
      provider.authorizationUrl = undefined;
      const stepping = clientFor(url, provider);
      await stepping.client.connect(stepping.transport);
      const attempt = await stepping.client
        .callTool({ name: "create_custom_dashboard", arguments: { name: "Après" } })
        .catch((error: unknown) => error);
      expect(String(attempt)).toMatch(/Unauthorized/);
      const back = await followAuthorization(provider.authorizationUrl!, {
        loginHint: READER.email,
      });
      expect(provider.authorizationUrl!.searchParams.get("scope")?.split(" ")).toEqual(
        expect.arrayContaining(["portfolio:read", "portfolio:write"]),
      );
      await stepping.transport.finishAuth(
        back.searchParams.get("code")!,
        back.searchParams.get("iss") ?? undefined,
      );
      await stepping.client.close();
      expect(provider.claims().scope).toBe("portfolio:read portfolio:write");
      const { client: writer } = await connectWith(url, provider);
      const draft = (await writer.callTool({
        name: "create_custom_dashboard",
        arguments: { name: "Après" },
      })) as Reply;
      expect(draft.structuredContent.confirmation_id).toBeTruthy();
      await writer.close();
    } finally {
      READER.scopes = "portfolio:read";
      await client.close();
    }
  });
});

describe("one user can never use another's", () => {
  it("session, confirmation_id or input-required seal, even acting for the same delegated user; nothing is sent upstream", async () => {
    const alice = new TestOAuthProvider("alice-laptop");
    const bob = new TestOAuthProvider("mallory-laptop");
    const a = await signIn(url, alice, ALICE.email);
    const b = await signIn(url, bob, MALLORY.email);
    const a26 = await connectWith(url, alice, "2026");
    try {
      const sessionId = a.transport.sessionId!;
      const draft = (await a.client.callTool({
        name: "create_custom_dashboard",
        arguments: { name: "Pas pour Bob" },
      })) as Reply;
      const sealed = (await a26.client.request(
        {
          method: "tools/call",
          params: { name: "create_custom_dashboard", arguments: { name: "Scellé d'Alice" } },
        },
        { allowInputRequired: true },
      )) as any;
      expect(sealed.resultType).toBe("input_required");

      const mark = sandbox.control.mark();
      // Bob's token on Alice's session.
      const hijack = await withToken(
        bob.accessToken,
        JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
        { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
      );
      expect(hijack.status).toBe(403);
      expect(hijack.body).toContain("This session belongs to another client.");
      // Bob confirming Alice's draft.
      const stolen = (await b.client.callTool({
        name: "confirm_write",
        arguments: { confirmation_id: draft.structuredContent.confirmation_id },
      })) as Reply;
      expect(stolen.isError).toBe(true);
      expect(stolen.content[0].text).toContain("drafted by another client or for another user");
      // Bob answering Alice's input-required confirmation with her sealed state.
      const b26 = await connectWith(url, bob, "2026");
      const replay = await b26.client
        .request(
          {
            method: "tools/call",
            params: {
              name: "create_custom_dashboard",
              arguments: { name: "Scellé d'Alice" },
              requestState: sealed.requestState,
              inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
            },
          },
          { allowInputRequired: true },
        )
        .catch((error: unknown) => error);
      expect(String((replay as Error).message)).toContain("issued to another user or client");
      await b26.client.close();
      expect(upstream(mark)).toEqual([]);

      // Alice's own session and seal still work for her.
      const own = await withToken(
        alice.accessToken,
        JSON.stringify({ jsonrpc: "2.0", id: 10, method: "tools/list" }),
        { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
      );
      expect(own.status).toBe(200);
      const accepted = (await a26.client.request(
        {
          method: "tools/call",
          params: {
            name: "create_custom_dashboard",
            arguments: { name: "Scellé d'Alice" },
            requestState: sealed.requestState,
            inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
          },
        },
        { allowInputRequired: true },
      )) as any;
      expect(accepted.structuredContent.status).toBe("succeeded");
    } finally {
      await Promise.all([a.client.close(), b.client.close(), a26.client.close()]);
    }
  });
});

describe("refusals, each with nothing sent upstream", () => {
  const now = () => Math.floor(Date.now() / 1000);
  const valid = () => ({ sub: ALICE.id, aud: url, email: ALICE.email, email_verified: true });
  const otherKey = (kid: string) => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    return { ...(privateKey.export({ format: "jwk" }) as JWK), kid };
  };

  it("refuses invalid tokens with 401 and the challenge", async () => {
    const tampered = await forgeToken(as, valid());
    const [head, , signature] = tampered.split(".");
    const swapped = Buffer.from(
      JSON.stringify({ ...valid(), iss: as.issuer, exp: now() + 300, sub: BOB.id }),
    ).toString("base64url");
    const cases: Array<[string, string, string]> = [
      [
        "expired",
        await forgeToken(as, { ...valid(), iat: now() - 600, exp: now() - 120 }),
        "the token has expired",
      ],
      [
        "not yet valid",
        await forgeToken(as, { ...valid(), nbf: now() + 600 }),
        "the token is not valid yet",
      ],
      [
        "wrong audience",
        await forgeToken(as, { ...valid(), aud: "https://other.example/mcp" }),
        "the token is not for this resource",
      ],
      [
        "wrong issuer",
        await forgeToken(as, { ...valid(), iss: "https://evil.example" }),
        "the token was issued by another issuer",
      ],
      ["bad signature", `${head}.${swapped}.${signature}`, "the token's signature does not verify"],
      [
        "alg none",
        unsignedToken({ ...valid(), iss: as.issuer, exp: now() + 300 }),
        "the token's signature algorithm is not accepted",
      ],
      [
        "unknown kid",
        await forgeToken(as, valid(), { key: otherKey("not-published") }),
        "the token was signed with a key the issuer does not publish",
      ],
      [
        "HS256 keyed with the public key",
        await forgeToken(as, valid(), {
          alg: "HS256",
          key: {
            kty: "oct",
            k: Buffer.from(JSON.stringify({ n: as.signingKey.n, e: as.signingKey.e })).toString(
              "base64url",
            ),
          },
        }),
        "the token's signature algorithm is not accepted",
      ],
      ["not a JWT", "opaque-token-0123456789", "the token is not a signed JWT"],
    ];
    for (const [what, token, description] of cases) {
      const mark = sandbox.control.mark();
      const reply = await withToken(token);
      expect(reply.status, what).toBe(401);
      expect(reply.headers["www-authenticate"], what).toBe(
        `Bearer error="invalid_token", error_description="${description.replace(/"/g, "'")}", scope="portfolio:read portfolio:write", resource_metadata="${metadataUrl()}"`,
      );
      expect(reply.body, what).toContain(description);
      expect(upstream(mark), what).toEqual([]);
    }
  });

  it("refuses, with 403 and one sentence, a user not on the list and an unverified e-mail", async () => {
    for (const [account, sentence] of [
      [
        CAROL,
        `${CAROL.email} is not on this server's list of users; ask its operator to add you (PORTFOLIO_OAUTH_USERS_FILE). Nothing was sent.`,
      ],
      [
        DAVE,
        "The identity provider does not vouch for the e-mail address in this access token (email_verified is not true), so it cannot name a user here. Nothing was sent.",
      ],
    ] as const) {
      const provider = new TestOAuthProvider(`${account.id}-app`);
      const mark = sandbox.control.mark();
      const error = await signIn(url, provider, account.email).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(error, account.email).not.toBeNull();
      const reply = await withToken(provider.accessToken);
      expect(reply.status).toBe(403);
      expect(reply.body.trim()).toBe(sentence);
      expect(upstream(mark)).toEqual([]);
    }
  });

  it("refuses a token without any portfolio scope with 403 insufficient_scope", async () => {
    const mark = sandbox.control.mark();
    const reply = await withToken(await forgeToken(as, { ...valid(), scope: "openid email" }));
    expect(reply.status).toBe(403);
    expect(reply.headers["www-authenticate"]).toBe(
      `Bearer error="insufficient_scope", scope="portfolio:read portfolio:write", resource_metadata="${metadataUrl()}"`,
    );
    expect(upstream(mark)).toEqual([]);
  });

  it("reports the API's own refusal of a delegated user not on the key's allowlist, as it does for any client", async () => {
    const provider = new TestOAuthProvider("erin-app");
    const { client } = await signIn(url, provider, ERIN.email);
    try {
      const mark = sandbox.control.mark();
      const reply = (await client.callTool({
        name: "list_my_saved_views",
        arguments: {},
      })) as Reply;
      expect(reply.isError).toBe(true);
      expect(reply.content[0].text).toContain(
        "this API key may not act for the delegated user (not on its allowlist)",
      );
      const sent = sandbox.control.requests({ since: mark, routeId: "saved_views_list" });
      expect(sent.map((e) => [e.status, e.headers["x-service-delegated-user-id"]])).toEqual([
        [403, DEMO_USERS.thomas],
      ]);
    } finally {
      await client.close();
    }
  });
});

describe("the clients file alongside sign-in", () => {
  it("lets a known automation token in as its client; an unknown one is checked as an access token", async () => {
    const mark = sandbox.control.mark();
    const automation = await withToken(AUTOMATION);
    expect(automation.status).toBe(200);
    const unknown = await withToken(`${AUTOMATION}x`);
    expect(unknown.status).toBe(401);
    expect(unknown.headers["www-authenticate"]).toContain('error="invalid_token"');
    expect(upstream(mark)).toEqual([]);
  });
});

describe("what the server keeps and shows", () => {
  it("logs the subject's hash and the client id, never a token or an address; metrics carry no identity", async () => {
    const provider = new TestOAuthProvider("log-check");
    const { client } = await signIn(url, provider, ALICE.email);
    await client.callTool({ name: "list_operations", arguments: { limit: 1 } });
    await client.close();
    const logs = await shared.stderr();
    expect(logs).toContain('"msg":"user signed in with OAuth"');
    expect(logs).toMatch(/"subject":"[0-9a-f]{24}","client_id":"[^"]+"/);
    expect(logs).not.toContain(provider.accessToken);
    expect(logs).not.toContain(provider.accessToken.split(".")[2]);
    expect(logs).not.toContain(ALICE.email);
    expect(logs).not.toContain(CAROL.email);
    const metrics = (await shared.raw("GET", "/metrics")).body;
    expect(metrics).toMatch(/portfolio_mcp_auth_refusals_total\{reason="expired"\} \d+/);
    expect(metrics).not.toContain("example.test");
    expect(metrics).not.toContain("oauth:");
  });
});

describe("behind a reverse proxy, with a low rate limit", () => {
  it("builds the resource from PORTFOLIO_PUBLIC_URL, accepts its Host, and counts each user's rate apart", async () => {
    const usersFile = join(mkdtempSync(join(tmpdir(), "oauth-users-")), "users.json");
    writeFileSync(
      usersFile,
      JSON.stringify({
        users: [ALICE, MALLORY].map((a) => ({ email: a.email, delegated_user: CAMILLE })),
      }),
    );
    const proxied = await startShared(sandbox, null, {
      PORTFOLIO_OAUTH_ISSUER: as.issuer,
      PORTFOLIO_OAUTH_USERS_FILE: usersFile,
      PORTFOLIO_PUBLIC_URL: "https://mcp.example.com",
      PORTFOLIO_MCP_RATE_LIMIT_PER_MINUTE: "3",
    });
    try {
      const resource = "https://mcp.example.com/mcp";
      const viaProxy = { host: "mcp.example.com" };
      const doc = await proxied.raw("GET", "/.well-known/oauth-protected-resource/mcp", viaProxy);
      expect(doc.status).toBe(200);
      expect(JSON.parse(doc.body).resource).toBe(resource);
      const bare = await proxied.raw("POST", "/mcp", { ...viaProxy, ...MCP_HEADERS }, initialize);
      expect(bare.headers["www-authenticate"]).toBe(
        'Bearer scope="portfolio:read portfolio:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"',
      );
      // A token for the bound address is not one for this resource.
      const local = await forgeToken(as, {
        sub: ALICE.id,
        aud: proxied.url,
        email: ALICE.email,
        email_verified: true,
      });
      expect(
        (
          await proxied.raw(
            "POST",
            "/mcp",
            { ...MCP_HEADERS, authorization: `Bearer ${local}` },
            initialize,
          )
        ).status,
      ).toBe(401);

      const tokenOf = (account: TestAccount) =>
        forgeToken(as, {
          sub: account.id,
          aud: resource,
          email: account.email,
          email_verified: true,
        });
      const send = async (token: string) =>
        (
          await proxied.raw(
            "POST",
            "/mcp",
            { ...viaProxy, ...MCP_HEADERS, authorization: `Bearer ${token}` },
            initialize,
          )
        ).status;
      const alice = await tokenOf(ALICE);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push(await send(alice));
      expect(statuses).toEqual([200, 200, 200, 429]);
      // Another person's bucket is their own, and so is a new token of Alice's: the same user.
      expect(await send(await tokenOf(MALLORY))).toBe(200);
      expect(await send(await tokenOf(ALICE))).toBe(429);
    } finally {
      await proxied.stop();
    }
  });
});
