import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { renderPdf } from "@portfolio-mcp/sandbox/pdf";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Served, serve, stopServed, WAYS } from "../helpers/served.js";

/**
 * A file's name and type become header lines of a multipart part. A content_type carrying CR/LF
 * used to be drafted as given and sent: the API received an extra header line in the part. Now
 * CR, LF and NUL in any value that becomes a header are refused when the write is drafted,
 * naming the field; nothing is stored and nothing is sent (the sandbox's request log).
 */
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
});
afterEach(stopServed);
afterAll(() => sandbox.close());

const pdf = renderPdf({ title: "Rapport", lines: ["Une ligne."] }).bytes.toString("base64");
const upload = (file: Record<string, unknown>) => ({
  operation: "document_upload",
  body: { category: "autre", file: { content_base64: pdf, ...file } },
});
const stored = (served: Served) => {
  const dir = join(served.stateDir, "intents");
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
};

/** The draft's refusal: its text, or null when it was drafted. */
async function refusal(served: Served, args: Record<string, unknown>): Promise<string | null> {
  try {
    const result = await served.callTool("draft_api_write", args);
    return result.isError ? (result.content[0]?.text ?? "") : null;
  } catch (error) {
    return (error as Error).message;
  }
}

describe("header values built from arguments", () => {
  for (const [wire, era] of WAYS) {
    it(`refuses CR, LF and NUL in a file's type and name at draft time (${wire}, ${era})`, async () => {
      const served = await serve(sandbox, { wire, era, contract: true });
      try {
        const mark = sandbox.control.mark();
        const injected = await refusal(
          served,
          upload({ filename: "rapport.pdf", content_type: "application/pdf\r\nX-Injected: yes" }),
        );
        expect(injected).toContain("file.content_type must not contain CR, LF or NUL");
        expect(injected).toContain("nothing was sent");
        const named = await refusal(
          served,
          upload({ filename: "rapport\n.pdf", content_type: "application/pdf" }),
        );
        expect(named).toContain("file.filename must not contain CR, LF or NUL");
        const nul = await refusal(
          served,
          upload({ filename: "rapport.pdf", content_type: "application/pdf\u0000" }),
        );
        expect(nul).toContain("file.content_type must not contain CR, LF or NUL");
        expect(stored(served)).toEqual([]);
        expect(sandbox.control.requests({ since: mark, routeId: "document_upload" })).toEqual([]);
      } finally {
        await served.close();
      }
    });
  }

  it("sends a file's name and type exactly as drafted, in the header lines the API reads", async () => {
    const served = await serve(sandbox, {
      wire: "stdio",
      era: "2025",
      contract: true,
      env: { PORTFOLIO_CONFIRM: "two-step" },
    });
    try {
      const mark = sandbox.control.mark();
      const drafted = await served.callTool(
        "draft_api_write",
        upload({ filename: 'rapport "final".pdf', content_type: "application/pdf" }),
      );
      expect(drafted.isError).toBeFalsy();
      const confirmationId = drafted.structuredContent?.confirmation_id as string;
      const done = await served.callTool("confirm_write", { confirmation_id: confirmationId });
      expect(done.structuredContent?.status).toBe("succeeded");
      const [sent] = sandbox.control.requests({ since: mark, routeId: "document_upload" });
      // A quote in a name is written %22, as browsers write it (WHATWG), and read back as ".
      const file = sent?.parts?.find((lines) => lines.some((l) => l.includes('name="file"')));
      expect(file).toEqual([
        'Content-Disposition: form-data; name="file"; filename="rapport %22final%22.pdf"',
        "Content-Type: application/pdf",
      ]);
    } finally {
      await served.close();
    }
  });
});
