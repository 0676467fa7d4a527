import {
  Client,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { importJWK, type JWK, type JWTPayload, SignJWT } from "jose";
import { followAuthorization, type RunningAuthServer } from "../../scripts/lib/oauth-server.mjs";

/**
 * The MCP SDK 2.x client's own OAuth support, driven by a test that plays the person and the
 * browser: an in-memory OAuthClientProvider, a loopback redirect URI nothing listens on (the
 * "browser" stops there and reads the code), dynamic client registration, PKCE.
 */
export class TestOAuthProvider implements OAuthClientProvider {
  private client?: StoredOAuthClientInformation;
  private stored?: StoredOAuthTokens;
  private verifier = "";
  private discovery?: OAuthDiscoveryState;
  /** The last authorization URL the SDK sent the user to. */
  authorizationUrl?: URL;

  constructor(readonly name = "oauth-tests") {}

  get redirectUrl(): string {
    return "http://127.0.0.1:9/callback";
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.client = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "tokens") this.stored = undefined;
  }

  /** The access token's claims (the test reads what the server will check). */
  claims(): JWTPayload & Record<string, unknown> {
    const token = this.stored?.access_token ?? "";
    return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
  }
  get accessToken(): string {
    return this.stored?.access_token ?? "";
  }
}

export type Era = "2025" | "2026";

/** A 2.x client on its own transport; the 2025 era opens a session, 2026 pins 2026-07-28. */
export function clientFor(url: string, provider: TestOAuthProvider, era: Era = "2025") {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client(
    { name: provider.name, version: "1.0.0" },
    era === "2026"
      ? {
          capabilities: { elicitation: { form: {} } },
          versionNegotiation: { mode: { pin: "2026-07-28" } },
          inputRequired: { autoFulfill: false },
        }
      : {},
  );
  return { client, transport };
}

/**
 * The whole sign-in as an MCP client does it: the first connect meets the 401, the SDK
 * discovers the metadata, registers, and sends the person to the authorization URL; the
 * "browser" signs in as `email` and comes back with a code; finishAuth exchanges it (PKCE,
 * `resource`); a new connection then works. Returns that connection.
 */
export async function signIn(url: string, provider: TestOAuthProvider, email: string, era?: Era) {
  const first = clientFor(url, provider, era);
  await first.client.connect(first.transport).then(
    () => {
      throw new Error("connected without signing in");
    },
    (error: unknown) => {
      if (!(error instanceof UnauthorizedError)) throw error;
    },
  );
  if (!provider.authorizationUrl) throw new Error("the SDK did not start an authorization");
  const back = await followAuthorization(provider.authorizationUrl, { loginHint: email });
  const code = back.searchParams.get("code");
  if (!code) throw new Error(`no code at the redirect URI: ${back.search}`);
  await first.transport.finishAuth(code, back.searchParams.get("iss") ?? undefined);
  return connectWith(url, provider, era);
}

/** A fresh connection with the provider's current tokens. */
export async function connectWith(url: string, provider: TestOAuthProvider, era?: Era) {
  const next = clientFor(url, provider, era);
  await next.client.connect(next.transport);
  return next;
}

/**
 * A JWT signed as the authorization server would (its own key, unless `key` says otherwise),
 * for the refusals no real server would issue: expired, another audience or issuer, and so on.
 */
export async function forgeToken(
  as: RunningAuthServer,
  claims: Record<string, unknown>,
  options: { key?: JWK & { kid?: string }; alg?: string; kid?: string } = {},
): Promise<string> {
  const jwk = options.key ?? as.signingKey;
  const alg = options.alg ?? "RS256";
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: as.issuer,
    iat: now,
    exp: now + 300,
    scope: "portfolio:read portfolio:write",
    client_id: "forged-client",
    ...claims,
  })
    .setProtectedHeader({ alg, typ: "at+jwt", kid: options.kid ?? jwk.kid ?? as.signingKey.kid })
    .sign(await importJWK(jwk, alg));
}

/** An unsigned token (`alg: none`), written by hand: jose refuses to make one. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "at+jwt" })}.${part(claims)}.`;
}
