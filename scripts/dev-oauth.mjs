#!/usr/bin/env node
// A local authorization server for trying sign-in (README, "Sign-in with your organisation's
// identity provider"), and a headless client that signs in through it.
//
//   node scripts/dev-oauth.mjs [--port 4455]
//       oidc-provider on http://127.0.0.1:4455 with two demo accounts: Camille (may read and
//       write) and Julien (read only). A browser sent there is signed in as the account named
//       by login_hint, else as Camille, and consents at once.
//   node scripts/dev-oauth.mjs sign-in <MCP URL> <e-mail>
//       what an MCP client does: meets the 401, reads the metadata, registers, signs in with
//       PKCE (this script plays the browser), then lists the tools and the user's saved views;
//       prints the access token on stdout for curl.
//
// Development only: an in-memory server on loopback that signs anyone in.
import { parseArgs } from "node:util";
import { followAuthorization, startAuthServer } from "./lib/oauth-server.mjs";

const DEMO_ACCOUNTS = [
  { id: "camille", email: "camille.martin@aurore-capital.example" },
  { id: "julien", email: "julien.bernard@aurore-capital.example", scopes: "portfolio:read" },
];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { port: { type: "string", default: "4455" } },
});

if (positionals[0] === "sign-in") {
  const [, url, email] = positionals;
  if (!url || !email) {
    process.stderr.write("usage: node scripts/dev-oauth.mjs sign-in <MCP URL> <e-mail>\n");
    process.exit(2);
  }
  await signIn(url, email);
} else {
  const server = await startAuthServer({ port: Number(values.port), accounts: DEMO_ACCOUNTS });
  process.stderr.write(`
Test authorization server (oidc-provider, development only)

  Issuer    ${server.issuer}
  Accounts  ${DEMO_ACCOUNTS.map((a) => `${a.email} (${a.scopes ?? "portfolio:read portfolio:write"})`).join("\n            ")}

Start the MCP server with PORTFOLIO_OAUTH_ISSUER=${server.issuer}. Stop with Ctrl+C.
`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/** The MCP SDK client's own OAuth flow, with this script as the browser. */
async function signIn(url, email) {
  const { Client, StreamableHTTPClientTransport, UnauthorizedError } = await import(
    "@modelcontextprotocol/client"
  );
  const state = {};
  const provider = {
    redirectUrl: "http://127.0.0.1:9/callback",
    clientMetadata: {
      client_name: "dev-oauth sign-in",
      redirect_uris: ["http://127.0.0.1:9/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
    clientInformation: () => state.client,
    saveClientInformation: (client) => (state.client = client),
    tokens: () => state.tokens,
    saveTokens: (tokens) => (state.tokens = tokens),
    redirectToAuthorization: (authorizationUrl) => (state.authorizationUrl = authorizationUrl),
    saveCodeVerifier: (verifier) => (state.verifier = verifier),
    codeVerifier: () => state.verifier,
    saveDiscoveryState: (discovery) => (state.discovery = discovery),
    discoveryState: () => state.discovery,
  };
  const connect = async () => {
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    const client = new Client({ name: "dev-oauth", version: "1.0.0" });
    await client.connect(transport);
    return { client, transport };
  };
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  try {
    await new Client({ name: "dev-oauth", version: "1.0.0" }).connect(first);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  if (!state.authorizationUrl) throw new Error(`${url} did not ask for a sign-in`);
  process.stderr.write(`signing in at ${state.authorizationUrl.origin} as ${email}\n`);
  const back = await followAuthorization(state.authorizationUrl, { loginHint: email });
  await first.finishAuth(back.searchParams.get("code"), back.searchParams.get("iss") ?? undefined);
  const claims = JSON.parse(
    Buffer.from(state.tokens.access_token.split(".")[1], "base64url").toString("utf8"),
  );
  process.stderr.write(`token for ${claims.aud}, scope "${claims.scope}"\n`);
  const { client } = await connect();
  try {
    const tools = (await client.listTools()).tools;
    process.stderr.write(`${tools.length} tools\n`);
    const views = await client.callTool({ name: "list_my_saved_views", arguments: {} });
    process.stderr.write(
      `list_my_saved_views: ${views.isError ? views.content[0].text : `${views.structuredContent.total} saved view${views.structuredContent.total === 1 ? "" : "s"}`}\n`,
    );
  } finally {
    await client.close();
  }
  process.stdout.write(`${state.tokens.access_token}\n`);
}
