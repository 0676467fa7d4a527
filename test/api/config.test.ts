import { describe, expect, it } from "vitest";
import { ConfigError, confirmWays, defaultStateDir, loadConfig } from "../../src/config.js";

const valid = {
  PORTFOLIO_API_BASE_URL: "https://partner.example.com/api/v1",
  PORTFOLIO_API_KEY_ID: "acme2026",
  PORTFOLIO_API_SECRET: "s3cret-value",
};

const load = (env: Record<string, string | undefined>, flags = {}) =>
  loadConfig({ env: env as NodeJS.ProcessEnv, flags, platform: "linux", home: "/home/pm" });

describe("configuration", () => {
  it("reads a valid environment with its defaults", () => {
    const config = load({ ...valid, PORTFOLIO_DELEGATED_USER_EMAIL: "camille@acme.example" });
    expect(config.api).toMatchObject({
      baseUrl: "https://partner.example.com/api/v1",
      keyId: "acme2026",
      tokenPrefix: "SERVICE-EXTERNAL-API-TOKEN-V1",
      delegationHeaderPrefix: "X-Service-Delegated-User",
      delegatedUser: { email: "camille@acme.example" },
      routesFile: null,
      timeoutMs: 30_000,
      maxRetries: 3,
      maxRetryWaitSeconds: 30,
    });
    expect(config.logLevel).toBe("info");
    expect(config.stateDir).toBe("/home/pm/.local/share/portfolio-mcp");
  });

  it("accepts a trailing slash after /v1 and lets flags override the environment", () => {
    const config = load(
      { ...valid, PORTFOLIO_API_BASE_URL: "http://127.0.0.1:4010/v1/" },
      {
        PORTFOLIO_API_KEY_ID: "fromflag",
        PORTFOLIO_LOG_LEVEL: "debug",
      },
    );
    expect(config.api.baseUrl).toBe("http://127.0.0.1:4010/v1");
    expect(config.api.keyId).toBe("fromflag");
    expect(config.logLevel).toBe("debug");
  });

  it.each([
    [{ PORTFOLIO_API_BASE_URL: undefined }, "PORTFOLIO_API_BASE_URL: is required"],
    [
      { PORTFOLIO_API_BASE_URL: "https://partner.example.com/api/v2" },
      "PORTFOLIO_API_BASE_URL: must be an http(s) URL ending with /v1",
    ],
    [
      { PORTFOLIO_API_BASE_URL: "ftp://x/v1" },
      "PORTFOLIO_API_BASE_URL: must be an http(s) URL ending with /v1",
    ],
    [
      { PORTFOLIO_API_KEY_ID: "ACME" },
      "PORTFOLIO_API_KEY_ID: must be 4 to 24 lowercase letters or digits",
    ],
    [
      { PORTFOLIO_API_KEY_ID: "abc" },
      "PORTFOLIO_API_KEY_ID: must be 4 to 24 lowercase letters or digits",
    ],
    [{ PORTFOLIO_API_SECRET: undefined }, "PORTFOLIO_API_SECRET: is required"],
    [
      { PORTFOLIO_DELEGATED_USER_EMAIL: "not-an-email" },
      "PORTFOLIO_DELEGATED_USER_EMAIL: must be an e-mail address",
    ],
    [
      { PORTFOLIO_LOG_LEVEL: "loud" },
      "PORTFOLIO_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent",
    ],
    [
      { PORTFOLIO_MAX_RETRIES: "many" },
      "PORTFOLIO_MAX_RETRIES: must be a whole number from 0 to 10",
    ],
    [{ PORTFOLIO_MAX_RETRIES: "11" }, "PORTFOLIO_MAX_RETRIES: must be at most 10"],
    [
      { PORTFOLIO_DELEGATION_HEADER_PREFIX: "X Bad" },
      "PORTFOLIO_DELEGATION_HEADER_PREFIX: must be a header name prefix",
    ],
    [
      { PORTFOLIO_TOKEN_PREFIX: "TWO\nLINES" },
      "PORTFOLIO_TOKEN_PREFIX: must be one line of printable characters",
    ],
  ])("fails on %j with one line naming the variable and the rule", (patch, message) => {
    const run = () => load({ ...valid, ...patch });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(message);
    try {
      run();
    } catch (error) {
      expect((error as Error).message).not.toContain("\n");
      expect((error as Error).message).not.toContain(valid.PORTFOLIO_API_SECRET);
    }
  });

  it("refuses both delegated user variables", () => {
    expect(() =>
      load({
        ...valid,
        PORTFOLIO_DELEGATED_USER_EMAIL: "a@b.example",
        PORTFOLIO_DELEGATED_USER_ID: "usr_1",
      }),
    ).toThrow("set at most one");
  });

  it("reads PORTFOLIO_CONFIRM as a preset or an ordered list of ways", () => {
    const ways = (value?: string) =>
      confirmWays(load({ ...valid, PORTFOLIO_CONFIRM: value }).writes.confirm);
    expect(ways()).toEqual(["form", "app", "two-step"]);
    expect(ways("elicitation")).toEqual(["form"]);
    expect(ways("app")).toEqual(["app"]);
    expect(ways(" app , form,app ")).toEqual(["app", "form"]);
    expect(() => load({ ...valid, PORTFOLIO_CONFIRM: "form,card" })).toThrow(
      /PORTFOLIO_CONFIRM.*"card" is not a way to confirm: use auto, elicitation, or a comma list of form, app and two-step/,
    );
    expect(() => load({ ...valid, PORTFOLIO_CONFIRM: "auto,two-step" })).toThrow(
      /"auto" is not a way/,
    );
  });

  it("treats blank optional variables as unset", () => {
    const config = load({ ...valid, PORTFOLIO_DELEGATED_USER_ID: " ", PORTFOLIO_ROUTES_FILE: "" });
    expect(config.api.delegatedUser).toBeNull();
    expect(config.api.routesFile).toBeNull();
  });

  it("places state in each platform's per-user data directory", () => {
    expect(defaultStateDir({}, "darwin", "/Users/pm")).toBe(
      "/Users/pm/Library/Application Support/portfolio-mcp",
    );
    expect(
      defaultStateDir({ LOCALAPPDATA: "C:\\Users\\pm\\AppData\\Local" }, "win32", "C:\\Users\\pm"),
    ).toContain("portfolio-mcp");
    expect(defaultStateDir({ XDG_DATA_HOME: "/data" }, "linux", "/home/pm")).toBe(
      "/data/portfolio-mcp",
    );
  });
});
