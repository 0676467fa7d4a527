import type { Config } from "./config.js";
import { VERSION } from "./version.js";

const auditLine = (file: string | null) =>
  file === null ? "off (PORTFOLIO_AUDIT_FILE)" : file === "-" ? "stderr" : file;

/** What serve --http prints on stderr once it listens. */
export interface BannerFacts {
  url: string;
  publicUrl: string | null;
  /** Sign-in with the identity provider, when on. */
  signIn: { issuer: string; users: number } | null;
  clientsFile: boolean;
  /** null: clients come from PORTFOLIO_MCP_CLIENTS_FILE or sign in, each as its own user. */
  token: string | null;
  generated: boolean;
  upstream: string;
  sandbox: boolean;
  user: Config["api"]["delegatedUser"];
  /** Where the audit trail goes; null when off. */
  audit: string | null;
}

export function banner(b: BannerFacts): string {
  return b.token === null ? sharedBanner(b) : personalBanner(b, b.token);
}

/** A shared deployment: clients come with their own tokens or sign in. */
function sharedBanner(b: BannerFacts): string {
  const lines = [
    b.publicUrl ? `  Public   ${b.publicUrl}/mcp` : null,
    b.signIn
      ? `  Sign-in  OAuth, tokens from ${b.signIn.issuer}; ${b.signIn.users} user(s) in PORTFOLIO_OAUTH_USERS_FILE`
      : null,
    b.clientsFile
      ? "  Clients  from PORTFOLIO_MCP_CLIENTS_FILE, each acting for its own user"
      : null,
  ].filter((line) => line !== null);
  return `
portfolio-mcp ${VERSION}: MCP over Streamable HTTP, shared

  URL      ${b.url}
${lines.join("\n")}
  API      ${b.upstream}
  Audit    ${auditLine(b.audit)}
  Health   /healthz, /readyz, /metrics

Stop with Ctrl+C (in-flight calls finish first).
`;
}

/** One person's server: the token, and how each client is pointed at it. */
function personalBanner(b: BannerFacts, token: string): string {
  // A token the operator chose is theirs to keep: printed only when we generated it.
  const shown = b.generated ? token : "$PORTFOLIO_MCP_TOKEN";
  // Clients use the public URL when there is one (a container's published port, a proxy).
  const url = b.publicUrl ? `${b.publicUrl}/mcp` : b.url;
  const auth = `Authorization: Bearer ${shown}`;
  const who = b.user
    ? "email" in b.user
      ? b.user.email
      : b.user.id
    : "nobody (no delegated user)";
  const client = JSON.stringify({
    servers: {
      portfolio: { type: "http", url, headers: { Authorization: `Bearer ${shown}` } },
    },
  });
  return `
portfolio-mcp ${VERSION}: MCP over Streamable HTTP

  URL    ${url}
  Token  ${b.generated ? `${token}   (generated; set PORTFOLIO_MCP_TOKEN to choose it)` : "from PORTFOLIO_MCP_TOKEN (not printed)"}
  API    ${b.sandbox ? `embedded sandbox, demo data (${b.upstream})` : b.upstream}, acting for ${who}
  Audit  ${auditLine(b.audit)}

MCP Inspector (CLI):
  npx -y -p @modelcontextprotocol/inspector@latest mcp-inspector --cli ${url} --transport http --header "${auth}" --method tools/list
Claude Code:
  claude mcp add --transport http portfolio ${url} --header "${auth}"
VS Code (.vscode/mcp.json) or Cursor (.cursor/mcp.json, same entry under "mcpServers"):
  ${client}

Stop with Ctrl+C.
`;
}
