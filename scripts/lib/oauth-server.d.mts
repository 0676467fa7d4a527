import type { JWK } from "jose";

export declare const RESOURCE_SCOPES: string;

export interface TestAccount {
  id: string;
  email: string;
  email_verified?: boolean;
  /** The resource scopes this account may be granted (default: both portfolio scopes). */
  scopes?: string;
}

export interface RunningAuthServer {
  issuer: string;
  /** The private signing key (JWK with kid and alg) the server's JWKS publishes. */
  signingKey: JWK & { kid: string; alg: string };
  provider: unknown;
  close(): Promise<void>;
}

export declare function startAuthServer(options: {
  port?: number;
  host?: string;
  accounts: TestAccount[];
  accessTokenTtl?: number;
}): Promise<RunningAuthServer>;

export declare function followAuthorization(
  authorizationUrl: string | URL,
  options?: { loginHint?: string },
): Promise<URL>;
