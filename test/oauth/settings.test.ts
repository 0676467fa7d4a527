import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveRoutes } from "../../src/api/routes.js";
import { loadConfig } from "../../src/config.js";
import { allowlistTerms } from "../../src/inventory/allowlist.js";
import { OAuthUsers } from "../../src/transport/oauth-users.js";

/** The sign-in settings and the users file: a wrong one stops the server, naming what to fix. */
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;
const API = {
  PORTFOLIO_API_BASE_URL: "https://api.example.com/v1",
  PORTFOLIO_API_KEY_ID: "demokey",
  PORTFOLIO_API_SECRET: "s3cret",
};
const config = (env: Record<string, string>) => () => loadConfig({ env: { ...API, ...env } });
const terms = allowlistTerms(resolveRoutes(null), {
  readOnly: false,
  allowSensitive: new Set(),
});
const usersFile = (content: unknown) => {
  const file = join(mkdtempSync(join(tmpdir(), "oauth-users-")), "users.json");
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
};
const CAMILLE = { email: "camille.martin@aurore-capital.example" };

describe("sign-in settings", () => {
  it("reads the issuer, audience, claim, users file and public URL", () => {
    const loaded = config({
      PORTFOLIO_OAUTH_ISSUER: "https://login.example.com/realms/team",
      PORTFOLIO_OAUTH_USERS_FILE: "/etc/portfolio/users.json",
      PORTFOLIO_PUBLIC_URL: "https://mcp.example.com/",
    })();
    expect(loaded.server.oauth).toEqual({
      issuer: "https://login.example.com/realms/team",
      audience: null,
      userClaim: "email",
      usersFile: "/etc/portfolio/users.json",
    });
    expect(loaded.server.publicUrl).toBe("https://mcp.example.com");
    expect(config({})().server.oauth).toBeNull();
  });

  it("refuses what cannot work, naming the variable and the rule", () => {
    expect(config({ PORTFOLIO_OAUTH_ISSUER: "http://login.example.com" })).toThrow(
      "PORTFOLIO_OAUTH_ISSUER: must be the authorization server's issuer URL, https:// (http:// only on loopback)",
    );
    expect(config({ PORTFOLIO_OAUTH_ISSUER: "https://login.example.com" })).toThrow(
      "PORTFOLIO_OAUTH_USERS_FILE: required with PORTFOLIO_OAUTH_ISSUER",
    );
    expect(config({ PORTFOLIO_OAUTH_USERS_FILE: "users.json" })).toThrow(
      "PORTFOLIO_OAUTH_USERS_FILE: set PORTFOLIO_OAUTH_ISSUER too",
    );
    expect(config({ PORTFOLIO_PUBLIC_URL: "https://example.com/portfolio" })).toThrow(
      "PORTFOLIO_PUBLIC_URL: must be the origin clients reach this server at",
    );
    expect(config({ PORTFOLIO_OAUTH_USER_CLAIM: "e mail" })).toThrow(
      "PORTFOLIO_OAUTH_USER_CLAIM: must be a claim name",
    );
  });
});

describe("the users file", () => {
  it("maps the claim's values to users; e-mail addresses in any case", () => {
    const users = OAuthUsers.fromFile(
      usersFile({
        users: [
          { email: "Alice@Example.test", delegated_user: CAMILLE },
          {
            email: "reader@example.test",
            delegated_user: { id: "usr_julien_bernard" },
            read_only: true,
            tools: ["list_operations"],
          },
        ],
      }),
      "email",
      terms,
    );
    expect(users.find("alice@example.TEST")).toEqual({
      delegatedUser: CAMILLE,
      readOnly: false,
      tools: null,
    });
    expect(users.find("reader@example.test")?.tools).toEqual(new Set(["list_operations"]));
    expect(users.find("carol@example.test")).toBeNull();
  });

  it("is keyed by the configured claim, compared exactly", () => {
    const users = OAuthUsers.fromFile(
      usersFile({ users: [{ preferred_username: "ABernard", delegated_user: CAMILLE }] }),
      "preferred_username",
      terms,
    );
    expect(users.find("ABernard")).not.toBeNull();
    expect(users.find("abernard")).toBeNull();
  });

  it("refuses a wrong file with the entry, the rule and the expected shape", () => {
    const refusal = (content: unknown, claim = "email") => {
      const file = usersFile(content);
      try {
        OAuthUsers.fromFile(file, claim, terms);
      } catch (error) {
        return (error as Error).message.replace(file, "users.json");
      }
      throw new Error("expected a refusal");
    };
    expect(refusal({ users: [{ delegated_user: CAMILLE }] })).toMatch(
      /^PORTFOLIO_OAUTH_USERS_FILE \(users\.json\): users\[0\]\.email is required; expected \{ "users": \[ \{ "email": "<the token's email claim>", "delegated_user"/,
    );
    // With another claim configured, the key is named after it.
    expect(refusal({ users: [{ delegated_user: CAMILLE }] }, "sub")).toContain(
      'users[0].sub is required; expected { "users": [ { "sub": "<the token\'s sub claim>"',
    );
    expect(refusal({ users: [{ email: "a@example.test" }] })).toContain(
      "users[0].delegated_user is required",
    );
    expect(
      refusal({
        users: [
          { email: "a@example.test", delegated_user: CAMILLE },
          { email: "A@example.test", delegated_user: CAMILLE },
        ],
      }),
    ).toBe("PORTFOLIO_OAUTH_USERS_FILE (users.json): email A@example.test appears twice");
    expect(
      refusal({
        users: [{ email: "a@example.test", delegated_user: CAMILLE, tools: ["list_operation"] }],
      }),
    ).toContain(
      "user a@example.test lists unknown entries in tools: list_operation (did you mean list_operations?)",
    );
    expect(refusal("{ not json")).toContain("cannot be read as JSON");
  });
});

describe("startup", () => {
  const serve = (extra: Record<string, string>) =>
    spawnSync(process.execPath, [CLI, "serve", "--http", "--sandbox", "--port", "0"], {
      env: {
        ...Object.fromEntries(
          Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
        ),
        PORTFOLIO_STATE_DIR: mkdtempSync(join(tmpdir(), "oauth-startup-")),
        ...extra,
      },
      encoding: "utf8",
      timeout: 20_000,
      input: "",
    });
  const users = () => usersFile({ users: [{ email: "a@example.test", delegated_user: CAMILLE }] });

  it("stops with one line when the issuer cannot be reached", () => {
    const result = serve({
      PORTFOLIO_OAUTH_ISSUER: "http://127.0.0.1:9",
      PORTFOLIO_OAUTH_USERS_FILE: users(),
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^portfolio-mcp: PORTFOLIO_OAUTH_ISSUER \(http:\/\/127\.0\.0\.1:9\): no authorization server metadata could be read \(http:\/\/127\.0\.0\.1:9\/\.well-known\/oauth-authorization-server: .*\); check the URL and that this host can reach it\n$/,
    );
  });

  it("refuses the single token next to sign-in: automation goes in the clients file", () => {
    const result = serve({
      PORTFOLIO_OAUTH_ISSUER: "http://127.0.0.1:9",
      PORTFOLIO_OAUTH_USERS_FILE: users(),
      PORTFOLIO_MCP_TOKEN: "a-personal-token-0123456789",
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      "PORTFOLIO_MCP_TOKEN and PORTFOLIO_OAUTH_ISSUER: with sign-in, tokens for automation go in PORTFOLIO_MCP_CLIENTS_FILE",
    );
  });
});
