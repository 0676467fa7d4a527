/**
 * What the shared HTTP deployment tells clients about sign-in (RFC 9728 protected resource
 * metadata, RFC 6750 challenges, the scopes), apart from oauth.ts and jose: every request's
 * steps need these, while the token checks load only when sign-in is configured.
 */

export const SCOPE_READ = "portfolio:read";
export const SCOPE_WRITE = "portfolio:write";
export const SCOPES = [SCOPE_READ, SCOPE_WRITE] as const;

/** RFC 9728 section 2: what a client needs to find the authorization server and what to ask. */
export function protectedResourceMetadata(resource: string, issuer: string) {
  return {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Portfolio (Partner API)",
  };
}

/** The well-known addresses of that document: the root one, and the one for /mcp. */
export const METADATA_PATHS = [
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/mcp",
];

/** A `WWW-Authenticate: Bearer …` challenge (RFC 6750 section 3; RFC 9728 section 5.1). */
export function bearerChallenge(params: {
  error?: "invalid_token" | "insufficient_scope";
  description?: string;
  scope?: string;
  resourceMetadata: string;
}): string {
  const parts: string[] = [];
  if (params.error) parts.push(`error="${params.error}"`);
  if (params.description)
    parts.push(`error_description="${params.description.replace(/"/g, "'")}"`);
  if (params.scope) parts.push(`scope="${params.scope}"`);
  parts.push(`resource_metadata="${params.resourceMetadata}"`);
  return `Bearer ${parts.join(", ")}`;
}
