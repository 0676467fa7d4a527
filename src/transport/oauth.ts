import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import { ConfigError } from "../config.js";

/**
 * The shared HTTP deployment as an OAuth 2.1 resource server (MCP specification,
 * authorization; RFC 9728 protected resource metadata; RFC 8707 audience; RFC 9068 JWT access
 * tokens). This module discovers the authorization server, keeps its signing keys and checks
 * access tokens; who the token's holder is lives in authenticate.ts.
 */

// What a client is told, apart from jose: answering it needs no token check (oauth-metadata.ts).
export {
  bearerChallenge,
  METADATA_PATHS,
  protectedResourceMetadata,
  SCOPE_READ,
  SCOPE_WRITE,
  SCOPES,
} from "./oauth-metadata.js";

/**
 * Asymmetric signatures only: never `none`, never HS* (an HMAC "signed" with the published key
 * would verify against it).
 */
export const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];
/** Clock skew tolerated on `exp` and `nbf`, in seconds. */
const LEEWAY_SECONDS = 30;
/** Keys are fetched again after this long, or sooner for an unknown `kid`... */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** ...but not more than once in this long, however many unknown `kid`s arrive. */
const JWKS_COOLDOWN_MS = 30_000;
const FETCH_TIMEOUT_MS = 5_000;

export interface IssuerMetadata {
  issuer: string;
  jwks_uri: string;
  /** Where the metadata was found. */
  source: string;
}

/**
 * The authorization server's metadata: RFC 8414 first (path-inserted), then OpenID Connect
 * discovery (appended, then path-inserted, as some servers place it). Its `issuer` must be the
 * configured one exactly (RFC 8414 section 3.3), and it must name its keys.
 */
export async function discoverIssuer(
  issuer: string,
  fetchFn: typeof fetch = fetch,
): Promise<IssuerMetadata> {
  const fail = (why: string) => new ConfigError(`PORTFOLIO_OAUTH_ISSUER (${issuer}): ${why}`);
  const tried: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetchFn(url, {
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
    } catch (error) {
      tried.push(`${url}: ${(error as Error).cause ?? (error as Error).message}`);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      tried.push(`${url}: HTTP ${response.status}`);
      continue;
    }
    let metadata: { issuer?: unknown; jwks_uri?: unknown };
    try {
      metadata = (await response.json()) as typeof metadata;
    } catch {
      tried.push(`${url}: not JSON`);
      continue;
    }
    if (metadata.issuer !== issuer)
      throw fail(
        `the metadata at ${url} names the issuer ${JSON.stringify(metadata.issuer)}; set PORTFOLIO_OAUTH_ISSUER to exactly that value (tokens carry it in iss)`,
      );
    if (typeof metadata.jwks_uri !== "string" || !/^https?:\/\//.test(metadata.jwks_uri))
      throw fail(
        `the metadata at ${url} has no jwks_uri: the server cannot check token signatures`,
      );
    // Keys fetched in clear could be swapped on the way: https, as the issuer itself must be.
    if (new URL(metadata.jwks_uri).protocol !== "https:" && new URL(issuer).protocol === "https:")
      throw fail(
        `its jwks_uri ${metadata.jwks_uri} is not https: its keys could be swapped in transit`,
      );
    return { issuer, jwks_uri: metadata.jwks_uri, source: url };
  }
  throw fail(
    `no authorization server metadata could be read (${tried.join("; ")}); check the URL and that this host can reach it`,
  );
}

function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, "");
  const at = (p: string) => `${url.origin}${p}`;
  return [
    ...new Set([
      at(`/.well-known/oauth-authorization-server${path}`),
      at(`${path}/.well-known/openid-configuration`),
      at(`/.well-known/openid-configuration${path}`),
    ]),
  ];
}

/** Why a presented token is refused: stable words for logs and metrics, a sentence for the client. */
export type TokenProblem =
  | "malformed"
  | "algorithm"
  | "unknown_key"
  | "signature"
  | "expired"
  | "not_yet_valid"
  | "issuer"
  | "audience"
  | "claims";

export type TokenVerdict =
  | { ok: true; claims: JWTPayload & Record<string, unknown>; scopes: ReadonlySet<string> }
  | { ok: false; problem: TokenProblem; description: string }
  /** The keys could not be fetched: not the token's fault, so not a 401. */
  | { ok: false; problem: "keys_unavailable"; description: string };

/** Checks access tokens against one issuer's published keys, for one audience. */
export class TokenVerifier {
  private constructor(
    readonly issuer: string,
    private readonly keys: JWTVerifyGetKey,
    private readonly clockTolerance: number,
  ) {}

  static async discover(
    issuer: string,
    options: { fetch?: typeof fetch; cooldownMs?: number; leewaySeconds?: number } = {},
  ): Promise<{ verifier: TokenVerifier; metadata: IssuerMetadata }> {
    const metadata = await discoverIssuer(issuer, options.fetch);
    const keys = createRemoteJWKSet(new URL(metadata.jwks_uri), {
      cooldownDuration: options.cooldownMs ?? JWKS_COOLDOWN_MS,
      cacheMaxAge: JWKS_MAX_AGE_MS,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
    return {
      verifier: new TokenVerifier(issuer, keys, options.leewaySeconds ?? LEEWAY_SECONDS),
      metadata,
    };
  }

  async verify(token: string, audience: string): Promise<TokenVerdict> {
    try {
      const { payload } = await jwtVerify(token, this.keys, {
        issuer: this.issuer,
        audience,
        algorithms: ALGORITHMS,
        clockTolerance: this.clockTolerance,
        requiredClaims: ["exp", "sub"],
      });
      return {
        ok: true,
        claims: payload as JWTPayload & Record<string, unknown>,
        scopes: scopesOf(payload),
      };
    } catch (error) {
      return refusal(error);
    }
  }
}

/** RFC 9068 `scope` (space-separated), or `scp` as some providers write it (list or string). */
function scopesOf(payload: JWTPayload): ReadonlySet<string> {
  const raw = payload.scope ?? payload.scp;
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(" ") : [];
  return new Set(list.filter((s): s is string => typeof s === "string" && s.length > 0));
}

function refusal(error: unknown): TokenVerdict {
  const no = (problem: TokenProblem, description: string): TokenVerdict => ({
    ok: false,
    problem,
    description,
  });
  if (error instanceof errors.JWTExpired) return no("expired", "the token has expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "iss") return no("issuer", "the token was issued by another issuer");
    if (error.claim === "aud") return no("audience", "the token is not for this resource");
    if (error.claim === "nbf") return no("not_yet_valid", "the token is not valid yet");
    return no("claims", `the token's ${error.claim} claim is missing or invalid`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
    return no("algorithm", "the token's signature algorithm is not accepted");
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return no("unknown_key", "the token was signed with a key the issuer does not publish");
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return no("signature", "the token's signature does not verify");
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid)
    return {
      ok: false,
      problem: "keys_unavailable",
      description: "the issuer's signing keys cannot be fetched",
    };
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid)
    return no("malformed", "the token is not a signed JWT");
  if (error instanceof errors.JOSEError) return no("malformed", "the token cannot be checked");
  // A network failure fetching the keys surfaces as a plain TypeError from fetch.
  return {
    ok: false,
    problem: "keys_unavailable",
    description: "the issuer's signing keys cannot be fetched",
  };
}
