import { createHash } from "node:crypto";
import type { Logger } from "../log.js";
import type { ClientRegistry, Principal } from "./clients.js";
import type { TokenVerdict, TokenVerifier } from "./oauth.js";
import {
  bearerChallenge,
  protectedResourceMetadata,
  SCOPE_READ,
  SCOPE_WRITE,
  SCOPES,
} from "./oauth-metadata.js";
import type { OAuthUser, OAuthUsers } from "./oauth-users.js";

/** Sign-in with the organisation's identity provider: the verifier and the list of users. */
export interface OAuthAccess {
  verifier: Pick<TokenVerifier, "verify" | "issuer">;
  users: OAuthUsers;
}

export interface AuthRefusal {
  ok: false;
  status: 401 | 403 | 503;
  message: string;
  headers: Record<string, string>;
  /** Stable words for logs and the refusal counter; never an identity. */
  reason: string;
}

export type AuthOutcome = { ok: true; principal: Principal } | AuthRefusal;

/** Where this resource is published, known once the server knows its address. */
interface Site {
  /** The resource URL: the audience tokens must carry. */
  resource: string;
  /** The RFC 9728 metadata document clients are pointed at. */
  metadataUrl: string;
}

const ALL_SCOPES = SCOPES.join(" ");
/** Subjects already logged at info level, so a sign-in is logged once, not on every request. */
const SEEN_MAX = 10_000;

/**
 * Who is calling, from the `Authorization` header. Precedence, when both are on: a token that
 * is a known clients-file token is that client (automation); anything else is checked as an
 * OAuth access token from the configured issuer, and its holder must be on the users list.
 */
export class Authenticator {
  private site: Site | null = null;
  private readonly seen = new Set<string>();

  constructor(
    private readonly clients: ClientRegistry,
    private readonly oauth: OAuthAccess | null,
    private readonly logger: Logger,
  ) {}

  get signIn(): boolean {
    return this.oauth !== null;
  }

  /** Called once listening: `publicBase` is PORTFOLIO_PUBLIC_URL or the bound address. */
  locate(publicBase: string, audience: string | null): void {
    this.site = {
      resource: audience ?? `${publicBase}/mcp`,
      metadataUrl: `${publicBase}/.well-known/oauth-protected-resource/mcp`,
    };
  }

  /** The protected resource metadata document; null without sign-in. */
  metadata(): object | null {
    if (!this.oauth) return null;
    return protectedResourceMetadata(this.where().resource, this.oauth.verifier.issuer);
  }

  async authenticate(header: string | undefined): Promise<AuthOutcome> {
    const client = this.clients.authenticate(header);
    if (client) return { ok: true, principal: client };
    if (!this.oauth) return tokenRefusal(header);
    const token = /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1];
    if (!token) {
      // RFC 6750 section 3.1: no credentials, no error code; the challenge says where to sign in.
      return this.unauthorized(
        `Sign-in required: this server accepts access tokens from ${this.oauth.verifier.issuer}, sent as Authorization: Bearer <token>; an MCP client finds how to sign in from this response's WWW-Authenticate header.`,
        "missing",
      );
    }
    const verdict = await this.oauth.verifier.verify(token, this.where().resource);
    if (!verdict.ok) return this.tokenRefused(verdict);
    return this.admit(this.oauth, verdict);
  }

  /** A token the verifier refused: 401, or 503 when the issuer's keys cannot be fetched. */
  private tokenRefused(verdict: Extract<TokenVerdict, { ok: false }>): AuthRefusal {
    if (verdict.problem === "keys_unavailable") {
      this.logger.warn({ reason: verdict.problem }, "cannot check an access token");
      return {
        ok: false,
        status: 503,
        message:
          "Sign-ins cannot be checked right now (the identity provider's signing keys cannot be fetched); retry shortly.",
        headers: { "Retry-After": "5" },
        reason: verdict.problem,
      };
    }
    this.logger.info({ reason: verdict.problem }, "access token refused");
    return this.unauthorized(
      `The access token was refused: ${verdict.description}. Sign in again.`,
      verdict.problem,
      verdict.description,
    );
  }

  /** A valid token's holder, if the users list names them and the token grants the read scope. */
  private admit(oauth: OAuthAccess, verdict: Extract<TokenVerdict, { ok: true }>): AuthOutcome {
    const { claims, scopes } = verdict;
    const subject = subjectHash(oauth.verifier.issuer, String(claims.sub));
    const clientId = stringClaim(claims.azp) ?? stringClaim(claims.client_id);
    const listed = listedUser(oauth.users, claims);
    if (!listed.ok) {
      this.logger.info({ subject, client_id: clientId, reason: listed.reason }, "sign-in refused");
      return {
        ok: false,
        status: 403,
        message: listed.message,
        headers: {},
        reason: listed.reason,
      };
    }
    // Who the user is comes first: a scope cannot help someone who is not on the list.
    if (!scopes.has(SCOPE_READ)) {
      this.logger.info(
        { subject, client_id: clientId, reason: "scope" },
        "sign-in refused: no portfolio scope",
      );
      return this.insufficientScope(
        `The access token does not grant ${SCOPE_READ}; sign in again and allow access to the portfolio.`,
      );
    }
    const canWrite = scopes.has(SCOPE_WRITE);
    const { user, value } = listed;
    const principal: Principal = {
      id: `oauth:${subject}`,
      delegatedUser: user.delegatedUser,
      readOnly: user.readOnly || !canWrite,
      tools: user.tools,
      // Verified by listedUser when the users file names people by it.
      ...(oauth.users.claim === "email" ? { email: value } : {}),
      oauth: { scopes: [...scopes], clientId, lacksWriteScope: !user.readOnly && !canWrite },
    };
    this.noteSignIn(principal, subject, clientId);
    return { ok: true, principal };
  }

  /**
   * 403 with the scopes to ask for (MCP authorization, scope challenge handling; RFC 6750
   * section 3.1): the whole set this server uses, so a client that signs in again asks for
   * everything at once rather than stepping up twice.
   */
  insufficientScope(message: string): AuthRefusal {
    return {
      ok: false,
      status: 403,
      message,
      headers: {
        "WWW-Authenticate": bearerChallenge({
          error: "insufficient_scope",
          scope: ALL_SCOPES,
          resourceMetadata: this.where().metadataUrl,
        }),
      },
      reason: "scope",
    };
  }

  private unauthorized(message: string, reason: string, description?: string): AuthRefusal {
    return {
      ok: false,
      status: 401,
      message,
      headers: {
        "WWW-Authenticate": bearerChallenge({
          ...(description ? { error: "invalid_token" as const, description } : {}),
          scope: ALL_SCOPES,
          resourceMetadata: this.where().metadataUrl,
        }),
      },
      reason,
    };
  }

  private where(): Site {
    if (!this.site) throw new Error("the authenticator was used before the server listened");
    return this.site;
  }

  private noteSignIn(principal: Principal, subject: string, clientId: string | null): void {
    if (this.seen.has(principal.id)) return;
    if (this.seen.size >= SEEN_MAX) this.seen.clear();
    this.seen.add(principal.id);
    this.logger.info(
      {
        subject,
        client_id: clientId,
        read_only: principal.readOnly,
      },
      "user signed in with OAuth",
    );
  }
}

/** Without sign-in: the clients file's (or the single token's) 401, as before. */
function tokenRefusal(header: string | undefined): AuthRefusal {
  // RFC 6750: a missing token gets the bare challenge; a wrong one, invalid_token.
  if (!header)
    return {
      ok: false,
      status: 401,
      message: "A bearer token is required: send Authorization: Bearer <token>.",
      headers: { "WWW-Authenticate": 'Bearer realm="portfolio-mcp"' },
      reason: "missing",
    };
  return {
    ok: false,
    status: 401,
    message:
      "The bearer token is not one this server knows: check the token the operator gave you (it is case-sensitive, and sent as Authorization: Bearer <token>).",
    headers: {
      "WWW-Authenticate":
        'Bearer realm="portfolio-mcp", error="invalid_token", error_description="unknown token"',
    },
    reason: "unknown_token",
  };
}

/**
 * A short, stable pseudonym of the token's subject: the same person from any of their clients,
 * different across issuers, and nothing that names them in logs.
 */
export function subjectHash(issuer: string, subject: string): string {
  return createHash("sha256").update(`${issuer}\n${subject}`).digest("hex").slice(0, 24);
}

type Listed =
  | { ok: true; user: OAuthUser; value: string }
  | { ok: false; reason: string; message: string };

/** The user the token's claim names on the users list, or why it names nobody there. */
function listedUser(users: OAuthUsers, claims: Record<string, unknown>): Listed {
  const value = stringClaim(claims[users.claim]);
  if (!value)
    return {
      ok: false,
      reason: "claim",
      message: `The access token carries no ${users.claim} claim, which this server uses to know who you are; its operator must have the identity provider include it (or set PORTFOLIO_OAUTH_USER_CLAIM). Nothing was sent.`,
    };
  if (users.claim === "email" && claims.email_verified !== true)
    return {
      ok: false,
      reason: "unverified",
      message:
        "The identity provider does not vouch for the e-mail address in this access token (email_verified is not true), so it cannot name a user here. Nothing was sent.",
    };
  const user = users.find(value);
  if (!user)
    return {
      ok: false,
      reason: "not_listed",
      message: `${value} is not on this server's list of users; ask its operator to add you (PORTFOLIO_OAUTH_USERS_FILE). Nothing was sent.`,
    };
  return { ok: true, user, value };
}

function stringClaim(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}
