import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveRoutes } from "../../src/api/routes.js";
import { loadConfig } from "../../src/config.js";
import { allowlistTerms } from "../../src/inventory/allowlist.js";
import { ClientRegistry } from "../../src/transport/clients.js";

/**
 * The delegated user is sent in a header on every /users/me call: whoever writes it (the
 * environment, the clients file) cannot end that header and start another.
 */
const env = {
  PORTFOLIO_API_BASE_URL: "https://partner.example.com/api/v1",
  PORTFOLIO_API_KEY_ID: "acme2026",
  PORTFOLIO_API_SECRET: "s3cret-value",
};
const clientsFile = (delegated_user: unknown) => {
  const file = join(mkdtempSync(join(tmpdir(), "clients-")), "clients.json");
  writeFileSync(
    file,
    JSON.stringify({ clients: [{ name: "c", token_sha256: "a".repeat(64), delegated_user }] }),
  );
  return file;
};
const terms = allowlistTerms(resolveRoutes(null), { readOnly: false, allowSensitive: new Set() });

describe("delegated users are one header line", () => {
  it("PORTFOLIO_DELEGATED_USER_EMAIL refuses a control character", () => {
    for (const email of ["camille@acme.example\u0000", "camille@acme.example\r\nX-Injected: yes"])
      expect(() => loadConfig({ env: { ...env, PORTFOLIO_DELEGATED_USER_EMAIL: email } })).toThrow(
        "PORTFOLIO_DELEGATED_USER_EMAIL: must be an e-mail address",
      );
  });

  it("the clients file refuses CR, LF and NUL in a delegated user, naming the entry", () => {
    for (const user of [
      { email: "camille@acme.example\r\nX-Injected: yes" },
      { id: "usr_1\u0000" },
      { id: "usr_1\nX: y" },
    ]) {
      const file = clientsFile(user);
      const key = "email" in user ? "email" : "id";
      expect(() => ClientRegistry.fromFile(file, terms)).toThrow(
        `PORTFOLIO_MCP_CLIENTS_FILE (${file}): clients[0].delegated_user.${key} must be one line, without CR, LF or NUL (it is sent in a header)`,
      );
    }
  });
});
