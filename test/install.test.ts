import { execFile, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DEMO_KEYS, type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOGUE } from "../src/api/catalogue.js";
import { describeVariables } from "../src/config.js";
import { connectInMemory } from "./helpers/mcp.js";

const CLI = new URL("../dist/cli.js", import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(new URL("../manifest.json", import.meta.url), "utf8"));
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const configuration = readFileSync(new URL("../docs/running.md", import.meta.url), "utf8");
const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PORTFOLIO_")),
  ) as Record<string, string>;
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, ...args], {
    env: { ...cleanEnv(), ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
/** Asynchronous, for runs that talk to this process's sandbox (a blocking spawn would starve it). */
const runAsync = (args: string[], env: Record<string, string>) =>
  promisify(execFile)(process.execPath, [CLI, ...args], {
    env: { ...cleanEnv(), ...env },
    encoding: "utf8",
    timeout: 30_000,
  }).then(
    ({ stdout, stderr }) => ({ status: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      status: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );

/** What doctor prints after its checks: the offer, family by family. */
const offerSection = (stdout: string) =>
  stdout.slice(stdout.indexOf("Operations offered over stdio")).trimEnd();

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

describe("the MCP Bundle manifest", () => {
  it("lists exactly the tools and prompts the server registers", async () => {
    // As the bundle's sandbox demo runs: with the sandbox's contract, so the long tail too.
    const mcp = await connectInMemory(sandbox, { writes: {}, contract: true });
    try {
      const tools = (await mcp.client.listTools()).tools.map((t) => t.name).sort();
      expect(manifest.tools.map((t: { name: string }) => t.name).sort()).toEqual(tools);
      const prompts = (await mcp.client.listPrompts()).prompts;
      expect(manifest.prompts.map((p: { name: string }) => p.name).sort()).toEqual(
        prompts.map((p) => p.name).sort(),
      );
      for (const prompt of prompts) {
        const declared = manifest.prompts.find((p: { name: string }) => p.name === prompt.name);
        expect(declared.arguments).toEqual(prompt.arguments?.map((a) => a.name));
      }
    } finally {
      await mcp.close();
    }
  });

  it("matches the package: version, engines, and the variables the server reads", () => {
    expect(manifest.manifest_version).toBe("0.3");
    expect(manifest.version).toBe(pkg.version);
    expect(manifest.compatibility.runtimes.node).toBe(pkg.engines.node);
    const known = new Set(describeVariables().map((v) => v.name));
    for (const [variable, value] of Object.entries(
      manifest.server.mcp_config.env as Record<string, string>,
    )) {
      expect(known.has(variable as never), variable).toBe(true);
      const key = /^\$\{user_config\.([a-z_]+)\}$/.exec(value)?.[1];
      expect(key && manifest.user_config[key], `${variable} maps to ${value}`).toBeTruthy();
    }
    expect(manifest.user_config.api_secret.sensitive).toBe(true);
    expect(Object.keys(manifest.user_config).sort()).toEqual(
      [
        "api_base_url",
        "api_key_id",
        "api_secret",
        "confirm_mode",
        "contract_file",
        "delegated_user_email",
        "read_only",
        "sandbox_demo",
      ].sort(),
    );
  });
});

describe("help and version", () => {
  it("prints the version", () => {
    expect(run(["--version"]).stdout).toBe(`${pkg.version}\n`);
  });

  it("lists every flag and every variable, and the README's table documents every variable", () => {
    const help = run(["--help"]).stdout;
    for (const flag of [
      "--sandbox",
      "--http",
      "--port",
      "--host",
      "--base-url",
      "--key-id",
      "--delegated-user-email",
      "--delegated-user-id",
      "--routes-file",
      "--state-dir",
      "--export-dir",
      "--log-level",
      "doctor",
    ]) {
      expect(help, flag).toContain(flag);
    }
    for (const { name } of describeVariables()) {
      expect(help, name).toContain(name);
      expect(configuration, `docs/running.md's configuration table: ${name}`).toContain(
        `| \`${name}\``,
      );
    }
  });
});

describe("portfolio-mcp doctor", () => {
  it("with --sandbox, reports every family working", () => {
    const result = run(["doctor", "--sandbox"]);
    expect(result.status, result.stderr).toBe(0);
    const lines = result.stdout.split("\n").filter((l) => /^(read|write) /.test(l));
    expect(lines.length).toBe(17);
    for (const line of lines) expect(line).toMatch(/\s{2}ok(\s|$)/);
    expect(result.stdout).toMatch(/token exchange\s+ok/);
    expect(result.stdout).toMatch(/delegated user\s+ok\s+acts for Camille Martin/);
    expect(result.stdout).toContain("nothing written");
  });

  it("with --sandbox, shows each family of the sandbox's contract offered or hidden, and why", () => {
    const result = run(["doctor", "--sandbox"]);
    expect(result.status, result.stderr).toBe(0);
    const section = offerSection(result.stdout);
    expect(section).toContain("from the embedded sandbox's export: 157 operations");
    expect(section).toMatch(/^calendar\s+6\s+1\s+a deletion: calendar_event_delete$/m);
    expect(section).toMatch(/^deals\s+7\s+0$/m);
    expect(section).toMatch(
      /^delegated\s+18\s+3\s+a deletion: saved_view_delete, custom_dashboard_delete\n\s+an RGPD erasure, which cannot be undone: rgpd_erasure_request$/m,
    );
    expect(section).toMatch(/^users\s+2\s+6\s+user administration: user_invite, user_update,/m);
    expect(section).toMatch(/^total\s+134\s+23$/m);
    expect(section).toContain(
      "Sensitive operations are offered when PORTFOLIO_ALLOW_SENSITIVE lists their family or their id,",
    );
    expect(section).not.toContain("no contract");
    for (const line of section.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it("with PORTFOLIO_ALLOW_SENSITIVE, offers what it lists and fails the configuration on a typo", () => {
    const result = run(["doctor", "--sandbox"], {
      PORTFOLIO_ALLOW_SENSITIVE: "calendar, task_delete,user_sync",
    });
    // A typo leaves hidden what the operator meant to offer: a misconfiguration, like the others.
    expect(result.status, result.stderr).toBe(2);
    expect(result.stdout).toMatch(
      /^configuration\s+failed\s+PORTFOLIO_ALLOW_SENSITIVE lists user_sync, which is neither a family nor an operation of the contract; did you mean spv_sync\?$/m,
    );
    const section = offerSection(result.stdout);
    expect(section).toMatch(/^calendar\s+7\s+0$/m);
    expect(section).toMatch(/^tasks\s+9\s+0$/m);
    expect(section).toMatch(/^total\s+136\s+21$/m);
  });

  it("read-only and without a delegated user, counts what each rule hides", async () => {
    const contract = join(mkdtempSync(join(tmpdir(), "doctor-contract-")), "contract.json");
    writeFileSync(contract, run(["sandbox", "contract", "--key", DEMO_KEYS.full.keyId]).stdout);
    const result = await runAsync(["doctor"], {
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: DEMO_KEYS.full.keyId,
      PORTFOLIO_API_SECRET: DEMO_KEYS.full.secret,
      PORTFOLIO_CONTRACT_FILE: contract,
      PORTFOLIO_READ_ONLY: "true",
    });
    expect(result.status, result.stdout).toBe(0);
    const section = offerSection(result.stdout);
    expect(section).toContain(`from PORTFOLIO_CONTRACT_FILE (${contract}): 157 operations`);
    expect(section).toMatch(/^deals\s+3\s+4\s+4 writes, and this server is read-only$/m);
    expect(section).toMatch(
      /^delegated\s+0\s+21\s+10 act as a user, and none is configured\n\s+11 writes, and this server is read-only$/m,
    );
    expect(section).toContain("Writes are offered once PORTFOLIO_READ_ONLY is removed");
    expect(section).toContain(
      "Operations that act as a user (/users/me*) are offered once PORTFOLIO_DELEGATED_USER_EMAIL or\nPORTFOLIO_DELEGATED_USER_ID names one.",
    );
    expect(section).not.toContain("Sensitive operations");
  });

  it("without a contract, says only the curated operations are reachable and how to offer the rest", async () => {
    const result = await runAsync(["doctor"], {
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: DEMO_KEYS.full.keyId,
      PORTFOLIO_API_SECRET: DEMO_KEYS.full.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: "camille.martin@aurore-capital.example",
    });
    expect(result.status, result.stdout).toBe(0);
    const section = offerSection(result.stdout);
    // The catalogue is the count: a curated operation added there is counted here.
    const curated = Object.keys(CATALOGUE).length;
    expect(section).toContain(`no contract: the ${curated} curated operations`);
    expect(section).toMatch(/^operations\s+\d+\s+0$/m);
    expect(section).toMatch(new RegExp(`^total\\s+${curated}\\s+0$`, "m"));
    expect(section.replace(/\s+/g, " ")).toContain(
      `Only these ${curated} curated operations are reachable, each through its own tool. To offer the rest of what the API key may call (through find_api_operations, call_api_read and draft_api_write), set PORTFOLIO_CONTRACT_FILE to the key's contract export, which the API's administrator provides. With the sandbox: npx portfolio-mcp sandbox contract --key sandboxdemo > contract.json`,
    );
    for (const line of section.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it("with a contract that leaves families out, refuses their probes without sending them", async () => {
    const contract = join(mkdtempSync(join(tmpdir(), "doctor-contract-")), "contract.json");
    writeFileSync(contract, run(["sandbox", "contract", "--key", DEMO_KEYS.limited.keyId]).stdout);
    const mark = sandbox.control.mark();
    const result = await runAsync(["doctor"], {
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: DEMO_KEYS.limited.keyId,
      PORTFOLIO_API_SECRET: DEMO_KEYS.limited.secret,
      PORTFOLIO_CONTRACT_FILE: contract,
    });
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(/read operations\s+ok/);
    expect(result.stdout).toMatch(
      /read deals\s+refused\s+the key's contract does not list deals_list \(nothing was sent\)/,
    );
    expect(result.stdout).toMatch(
      /write operation notes\s+refused\s+the key's contract does not list operation_note_create/,
    );
    expect(
      sandbox.control
        .requests({ since: mark })
        .map((r) => r.routeId)
        .filter((id) => id !== "auth_token"),
    ).toEqual(["operations_list", "calendar_list"]);
    const section = offerSection(result.stdout);
    expect(section).toMatch(/^calendar\s+1\s+0$/m);
    expect(section).toMatch(/^total\s+2\s+0$/m);
  });

  it("with PORTFOLIO_SANDBOX=true, does the same", () => {
    expect(run(["doctor"], { PORTFOLIO_SANDBOX: "true" }).status).toBe(0);
    const wrong = run(["doctor"], { PORTFOLIO_SANDBOX: "yes" });
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toBe("portfolio-mcp: PORTFOLIO_SANDBOX: must be true, false or auto\n");
  });

  it("with PORTFOLIO_SANDBOX=auto (the image's), uses the sandbox unless an API is given", async () => {
    const demo = run(["doctor"], { PORTFOLIO_SANDBOX: "auto" });
    expect(demo.status).toBe(0);
    expect(demo.stdout).toContain("portfolio-mcp doctor (embedded sandbox)");
    const given = await runAsync(["doctor"], {
      PORTFOLIO_SANDBOX: "auto",
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: DEMO_KEYS.readOnly.keyId,
      PORTFOLIO_API_SECRET: DEMO_KEYS.readOnly.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: "camille.martin@aurore-capital.example",
    });
    expect(given.stdout).toMatch(/^portfolio-mcp doctor\n/);
    expect(given.stdout).toMatch(/read operations\s+ok/);
  });

  it("with a read-only key, shows the write families refused with the reason, and writes nothing", async () => {
    const before = sandbox.control.state.data.notes.length;
    const result = await runAsync(["doctor"], {
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: DEMO_KEYS.readOnly.keyId,
      PORTFOLIO_API_SECRET: DEMO_KEYS.readOnly.secret,
      PORTFOLIO_DELEGATED_USER_EMAIL: "camille.martin@aurore-capital.example",
    });
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(/read operations\s+ok/);
    expect(result.stdout).toMatch(
      /write operation notes\s+refused\s+The Partner API refused write operation notes: this API key lacks the scope operations:write/,
    );
    expect(result.stdout).toMatch(/write my dashboards\s+refused\s+.*lacks the scope users:write/);
    expect(result.stdout).toMatch(/write SIREN resolution\s+refused\s+.*operateurs:write/);
    expect(sandbox.control.state.data.notes.length).toBe(before);
    expect(result.stdout).not.toContain(DEMO_KEYS.readOnly.secret);
  });

  it("with a wrong secret, stops at the token exchange", async () => {
    const result = await runAsync(["doctor"], {
      PORTFOLIO_API_BASE_URL: sandbox.baseUrl,
      PORTFOLIO_API_KEY_ID: DEMO_KEYS.full.keyId,
      PORTFOLIO_API_SECRET: "not-the-secret",
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(
      /token exchange\s+failed\s+The Partner API refused to sign this server in \(invalid_signature\): check PORTFOLIO_API_KEY_ID, PORTFOLIO_API_SECRET/,
    );
    expect(result.stdout).not.toMatch(/read portfolio/);
  });

  it.each([
    [
      "nothing listens there",
      () => "http://127.0.0.1:9/v1",
      /connection was refused \(ECONNREFUSED\)/,
    ],
    [
      "a misspelt host",
      () => "http://sandbox.invalid/v1",
      /host name sandbox\.invalid does not resolve \(DNS, ENOTFOUND\); check the spelling/,
    ],
    [
      "https on a plain HTTP port",
      () => sandbox.baseUrl.replace("http://", "https://"),
      /TLS handshake failed .*should start with http:\/\//,
    ],
  ])("names the address and the cause when %s", async (_case, url, cause) => {
    const result = await runAsync(["doctor"], {
      PORTFOLIO_API_BASE_URL: url(),
      PORTFOLIO_API_KEY_ID: DEMO_KEYS.full.keyId,
      PORTFOLIO_API_SECRET: DEMO_KEYS.full.secret,
      PORTFOLIO_MAX_RETRIES: "0",
    });
    expect(result.status).toBe(1);
    const line = result.stdout.split("\n").find((l) => l.startsWith("token exchange")) ?? "";
    expect(line).toContain(`The Partner API at ${url()} could not be reached for signing in`);
    expect(line).toMatch(cause);
  });

  it("fails while a damaged intent file waits to be checked", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "doctor-journal-"));
    mkdirSync(join(stateDir, "intents"), { recursive: true });
    writeFileSync(join(stateDir, "intents", "cf_truncated0000001.json"), '{"id":"cf_trunc');
    const result = await runAsync(["doctor", "--sandbox"], { PORTFOLIO_STATE_DIR: stateDir });
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(/journal\s+failed\s+1 damaged intent file\(s\) under /);
  });

  it("fails on a PORTFOLIO_ variable it does not know, naming the one meant", async () => {
    const result = await runAsync(["doctor", "--sandbox"], {
      PORTFOLIO_DELEGATED_USER_MAIL: "camille.martin@aurore-capital.example",
    });
    expect(result.status).toBe(2);
    expect(result.stdout).toMatch(
      /configuration\s+failed\s+PORTFOLIO_DELEGATED_USER_MAIL is not a setting of this server; did you mean PORTFOLIO_DELEGATED_USER_EMAIL\?/,
    );
  });
});
