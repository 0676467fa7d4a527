// A real OAuth 2.1 / OpenID Connect authorization server on loopback, for the tests and the
// README's local walkthrough: oidc-provider (a dev dependency) with dynamic client
// registration, PKCE, resource indicators (RFC 8707) and JWT access tokens (RFC 9068) for any
// `…/mcp` resource. Sign-in is automatic: the account named by `login_hint`, else the first
// one; consent grants every scope asked for. Never a production identity provider.
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { createServer } from "node:http";

export const RESOURCE_SCOPES = "portfolio:read portfolio:write";

/**
 * Starts the server. `accounts`: { id, email, email_verified?, scopes? } (`scopes`: what the
 * account may be granted, default both portfolio scopes; the rest is refused at consent).
 * Returns its issuer, the private signing key as a JWK (so tests can forge tokens with it),
 * and close().
 */
export async function startAuthServer({
  port = 0,
  host = "127.0.0.1",
  accounts,
  accessTokenTtl = 600,
} = {}) {
  // Loaded here, not at the top: followAuthorization alone (the sign-in client) needs none of it.
  const { default: Provider } = await import("oidc-provider");
  const http = createServer();
  await new Promise((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, resolve);
  });
  const issuer = `http://${host}:${http.address().port}`;
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const signingKey = {
    ...privateKey.export({ format: "jwk" }),
    kid: `test-${randomUUID()}`,
    alg: "RS256",
    use: "sig",
  };
  const byId = new Map(accounts.map((a) => [a.id, a]));
  const byEmail = new Map(accounts.map((a) => [a.email.toLowerCase(), a]));
  const claimsOf = (account) => ({
    sub: account.id,
    email: account.email,
    email_verified: account.email_verified ?? true,
  });

  const provider = new Provider(issuer, {
    clients: [],
    jwks: { keys: [signingKey] },
    findAccount: async (_ctx, id) => {
      const account = byId.get(id);
      return account && { accountId: id, claims: async () => claimsOf(account) };
    },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    // The portfolio scopes are listed too: dynamic registration refuses scopes it does not know.
    scopes: ["openid", "offline_access", "email", "portfolio:read", "portfolio:write"],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resource) => {
          if (!/^https?:\/\/[^/]+\/mcp$/.test(resource)) throw new Provider.errors.InvalidTarget();
          return {
            scope: RESOURCE_SCOPES,
            audience: resource,
            accessTokenTTL: accessTokenTtl,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256" } },
          };
        },
      },
    },
    // The user's e-mail in the access token: what the resource server maps to a user.
    extraTokenClaims: async (_ctx, token) => {
      const account = token.accountId && byId.get(token.accountId);
      if (!account) return undefined;
      const { email, email_verified } = claimsOf(account);
      return { email, email_verified };
    },
    ttl: {
      AccessToken: accessTokenTtl,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      RefreshToken: 3600,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  // Loopback only, plain http: oidc-provider would otherwise insist on secure cookies.
  provider.proxy = false;

  // The interaction "pages": sign in the hinted account, consent to everything asked.
  provider.use(async (ctx, next) => {
    const match = /^\/interaction\/([^/]+)$/.exec(ctx.path);
    if (!match || ctx.method !== "GET") return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const { prompt, params } = details;
    if (prompt.name === "login") {
      const hint = typeof params.login_hint === "string" ? params.login_hint.toLowerCase() : null;
      const account = hint ? (byEmail.get(hint) ?? byId.get(hint)) : accounts[0];
      if (!account) {
        ctx.status = 403;
        ctx.body = `No account ${hint} on this test server.`;
        return;
      }
      await provider.interactionFinished(
        ctx.req,
        ctx.res,
        { login: { accountId: account.id } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    // The account's own limit: what it may not have is refused, not asked again.
    const account = byId.get(details.session.accountId);
    const allowed = new Set((account?.scopes ?? RESOURCE_SCOPES).split(" "));
    for (const [resource, scope] of Object.entries(missing.missingResourceScopes ?? {})) {
      const granted = scope.filter((s) => allowed.has(s));
      const refused = scope.filter((s) => !allowed.has(s));
      if (granted.length > 0) grant.addResourceScope(resource, granted.join(" "));
      if (refused.length > 0) grant.rejectResourceScope(resource, refused.join(" "));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(
      ctx.req,
      ctx.res,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
  });

  const handle = provider.callback();
  http.on("request", handle);
  return {
    issuer,
    /** The private signing key (JWK, with its kid): the one the server's JWKS publishes. */
    signingKey,
    provider,
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/**
 * Plays the browser for an authorization URL: follows redirects with a cookie jar through the
 * automatic sign-in and consent, and returns the URL the server finally sends the user to (the
 * client's redirect URI, with `code` and `state`).
 */
export async function followAuthorization(authorizationUrl, { loginHint } = {}) {
  const jar = new Map();
  let url = new URL(authorizationUrl);
  if (loginHint) url.searchParams.set("login_hint", loginHint);
  for (let hop = 0; hop < 20; hop++) {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const response = await fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair.indexOf("=");
      jar.set(pair.slice(0, at).trim(), pair.slice(at + 1));
    }
    const location = response.headers.get("location");
    await response.body?.cancel();
    if (!location) throw new Error(`authorization stopped at ${url} with HTTP ${response.status}`);
    const next = new URL(location, url);
    if (next.origin !== new URL(authorizationUrl).origin) return next;
    url = next;
  }
  throw new Error("too many redirects during authorization");
}
