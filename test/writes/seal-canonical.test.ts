import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bearerKey, openBearer, sealBearer } from "../../src/auth/bearer-seal.js";
import { SealError, type SealedState, Sealer } from "../../src/writes/seal.js";
import { sameBytesLeniently, variantsOf } from "../helpers/seal-variants.js";
import { serve, stopServed, type ToolResult } from "../helpers/served.js";

/**
 * A sealed token has one spelling: each variant below reads as the genuine token's bytes under
 * Node's lenient base64url, and each used to open as the genuine token. Only the exact string
 * opens now.
 */
const state: SealedState = {
  intent: "int_1",
  tool: "create_custom_dashboard",
  args: "0".repeat(64),
  user: "camille.martin@aurore-capital.example",
  client: "http:tests",
  expires: Date.now() + 60_000,
};

describe("sealed tokens are canonical", () => {
  it("a request state or card token: only its exact spelling opens", async () => {
    const sealer = await Sealer.open(mkdtempSync(join(tmpdir(), "seal-")), null);
    // Seal until the token has a character the standard alphabet spells otherwise.
    let token = sealer.seal(state);
    while (!/[-_]/.test(token.slice(3))) token = sealer.seal(state);
    expect(sealer.open(token)).toEqual(state);
    const variants = variantsOf(token);
    expect(Object.keys(variants)).toHaveLength(7);
    for (const [what, variant] of Object.entries(variants)) {
      expect(sameBytesLeniently(variant, token), what).toBe(true);
      expect(() => sealer.open(variant), what).toThrow(SealError);
    }
  });

  it("a shared bearer on Redis: only its exact spelling opens", () => {
    const key = bearerKey("secret-1", "http://a/v1", "k1");
    let sealed = sealBearer(key, "bearer-token-value", "ctx");
    while (!/[-_]/.test(sealed)) sealed = sealBearer(key, "bearer-token-value", "ctx");
    expect(openBearer(key, sealed, "ctx")).toBe("bearer-token-value");
    for (const [what, variant] of Object.entries(variantsOf(sealed)))
      expect(openBearer(key, variant, "ctx"), what).toBeNull();
  });
});

/** The card's token wherever the result carries it (its `_meta` for the view, or the outcome). */
function cardTokenOf(result: ToolResult): string {
  const found: string[] = [];
  const walk = (value: unknown) => {
    if (typeof value === "string" && /^s1\.[A-Za-z0-9_-]+$/.test(value)) found.push(value);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(result._meta);
  walk(result.structuredContent);
  if (!found[0]) throw new Error("the draft carries no card token");
  return found[0];
}

describe("sealed tokens through the command", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ rateLimit: false });
  });
  afterEach(stopServed);
  afterAll(() => sandbox.close());
  const posts = (mark: number, name: string) =>
    sandbox.control
      .requests({ since: mark, routeId: "custom_dashboard_create" })
      .filter((e) => (e.body as { name?: string }).name === name);

  for (const wire of ["stdio", "http"] as const) {
    it(`a 2026 request state over ${wire}: every other spelling is refused, nothing is sent`, async () => {
      const served = await serve(sandbox, { wire, era: "2026", elicitation: true });
      try {
        const name = `Scellé ${wire}`;
        const mark = sandbox.control.mark();
        const asked = await served.call("create_custom_dashboard", { name });
        expect(asked.resultType).toBe("input_required");
        const state = asked.requestState as string;
        const yes = { confirm: { action: "accept", content: { confirm: true } } };
        for (const [what, variant] of Object.entries(variantsOf(state))) {
          const refused = await served
            .call(
              "create_custom_dashboard",
              { name },
              { requestState: variant, inputResponses: yes },
            )
            .then(
              () => null,
              (error: Error) => error.message,
            );
          expect(refused, what).toMatch(/cannot be used: it (was altered|is not a request state)/);
        }
        expect(posts(mark, name)).toHaveLength(0);
        const done = await served.call(
          "create_custom_dashboard",
          { name },
          { requestState: state, inputResponses: yes },
        );
        expect(done.structuredContent.status).toBe("succeeded");
        expect(posts(mark, name)).toHaveLength(1);
      } finally {
        await served.close();
      }
    });

    it(`a 2025 session's card token over ${wire}: every other spelling is refused, nothing is sent`, async () => {
      const served = await serve(sandbox, { wire, era: "2025", apps: true });
      try {
        const name = `Carte scellée ${wire}`;
        const mark = sandbox.control.mark();
        const token = cardTokenOf(await served.callTool("create_custom_dashboard", { name }));
        for (const [what, variant] of Object.entries(variantsOf(token))) {
          const refused = await served.callTool("app_confirm_write", { token: variant });
          expect(refused.isError, what).toBe(true);
          expect(refused.content[0]?.text, what).toMatch(
            /^This confirmation cannot be used: the token (it was altered|it is not a request state).*nothing was sent/,
          );
        }
        expect(posts(mark, name)).toHaveLength(0);
        const done = await served.callTool("app_confirm_write", { token });
        expect(done.structuredContent?.status).toBe("succeeded");
        expect(posts(mark, name)).toHaveLength(1);
      } finally {
        await served.close();
      }
    });
  }
});
