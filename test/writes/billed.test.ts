import { type Sandbox, startSandbox } from "@portfolio-mcp/sandbox";
import { withCheckDigit } from "@portfolio-mcp/sandbox/siren";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../src/api/catalogue.js";
import { normaliseContract } from "../../src/api/contract/load.js";
import { resolveRoutes } from "../../src/api/routes.js";
import type { SharedRedis } from "../../src/state/redis.js";
import { ago, BILLED_TTL_MS, BilledInMemory, BilledOnRedis } from "../../src/writes/billed.js";
import { connectInMemory, type InMemoryOptions } from "../helpers/mcp.js";
import { dropAndClose, testRedis } from "../helpers/redis.js";

/**
 * A billable call made moments ago for the same target is named in the next draft's preview
 * (issue 23), so that the person does not pay twice by accident: per caller, for an hour, on the
 * fleet's Redis when there is one. Through the SDK's client and the form it shows the person;
 * the sandbox counts what was billed.
 */
let sandbox: Sandbox;
let redis: SharedRedis;
const sessions: Array<{ close(): Promise<void> }> = [];
/** The forms the person was shown, and what they answer next. */
let forms: string[] = [];
let answer: "accept" | "decline" = "accept";
const open = async (options: InMemoryOptions = {}) => {
  const session = await connectInMemory(sandbox, {
    writes: {},
    elicit: (request) => {
      forms.push(request.message);
      return answer === "accept"
        ? { action: "accept", content: { confirm: true } }
        : { action: "decline" };
    },
    ...options,
  });
  sessions.push(session);
  return session;
};
type Session = Awaited<ReturnType<typeof open>>;
const call = async (s: Session, name: string, args: Record<string, unknown>) => {
  const reply = (await s.client.callTool({ name, arguments: args })) as any;
  expect(reply.isError, JSON.stringify(reply.content)).toBeFalsy();
  return reply.structuredContent;
};
const billedSoFar = () => sandbox.control.stats().billableResolutions;
/** A valid SIREN no other test uses. */
let next = 41_000_000;
const freshSiren = () => withCheckDigit(String(next++));

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimit: false });
  redis = await testRedis("billed");
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
  forms = [];
  answer = "accept";
});
afterAll(async () => {
  await dropAndClose(redis);
  await sandbox.close();
});

describe("a billable call made moments ago", () => {
  it("is named in the next draft of the same resolution, which the person may still decline", async () => {
    const s = await open();
    const siren = freshSiren();
    const before = billedSoFar();
    expect((await call(s, "resolve_siren", { siren })).status).toBe("succeeded");
    expect(forms[0]).not.toContain("was resolved");

    answer = "decline";
    expect((await call(s, "resolve_siren", { siren })).status).toBe("cancelled");
    expect(forms[1]).toContain(
      `Warning: SIREN ${siren} was resolved less than a minute ago; lookup_siren reads that answer from the cache, free. Resolving again is charged again.`,
    );
    expect(forms[1]).toContain("This call is billable");
    expect(billedSoFar()).toBe(before + 1);

    // Another SIREN was never resolved: nothing to say.
    await call(s, "resolve_siren", { siren: freshSiren() });
    expect(forms[2]).not.toContain("was resolved");
  });

  it("is not named after a declined draft, nor to another caller", async () => {
    const s = await open();
    const siren = freshSiren();
    answer = "decline";
    await call(s, "resolve_siren", { siren });
    await call(s, "resolve_siren", { siren });
    expect(forms[1]).not.toContain("was resolved");

    answer = "accept";
    await call(s, "resolve_siren", { siren });
    const other = await open({ client: "another-client" });
    answer = "decline";
    await call(other, "resolve_siren", { siren });
    expect(forms.at(-1)).not.toContain("was resolved");
  });

  it("is named by any replica of a fleet that shares Redis, with the time since", async () => {
    const shared = { billed: new BilledOnRedis(redis), client: "fleet-client" };
    const first = await open(shared);
    const second = await open(shared);
    const siren = freshSiren();
    await call(first, "resolve_siren", { siren });
    // Two minutes pass: the stored moment moves back as the clock would.
    const [key] = await redis.client.keys(`${redis.prefix}billed:*`);
    const stored = JSON.parse((await redis.client.get(key!))!);
    await redis.client.set(key!, JSON.stringify({ ...stored, at: stored.at - 125_000 }), {
      PX: BILLED_TTL_MS,
    });
    expect(await redis.client.pTTL(key!)).toBeGreaterThan(BILLED_TTL_MS - 60_000);
    answer = "decline";
    await call(second, "resolve_siren", { siren });
    expect(forms.at(-1)).toContain(`SIREN ${siren} was resolved 2 minutes ago`);

    // Without the shared store, another replica knows only what it sent itself.
    const alone = await open({ billed: new BilledInMemory(), client: "fleet-client" });
    await call(alone, "resolve_siren", { siren });
    expect(forms.at(-1)).not.toContain("was resolved");
  });

  it("is named in a long-tail draft of the same billable write, not of another target", async () => {
    // A deployment whose contract marks AI extraction billable (x-billable).
    const exported = (await (
      await fetch(
        new URL(`/_admin/keys/${sandbox.credentials.keyId}/contract.json`, sandbox.baseUrl),
      )
    ).json()) as any;
    exported.paths["/documents/{document_id}/extraction-jobs"].post["x-billable"] = true;
    const routes: ReadonlyMap<string, Operation> = resolveRoutes(
      null,
      normaliseContract(exported, "an export with a billable extraction"),
    );
    expect(routes.get("extraction_job_create")?.contract?.billable).toBe(true);
    const s = await open({ contract: routes });
    const [document, other] = sandbox.control.state.data.documents.filter(
      (d) => d.text_indexed && d.dataroom === null,
    );
    const draft = (id: string) =>
      call(s, "draft_api_write", {
        operation: "extraction_job_create",
        path: JSON.stringify({ document_id: id }),
      });
    const mark = sandbox.control.mark();
    expect((await draft(document!.id)).status).toBe("succeeded");
    answer = "decline";
    await draft(document!.id);
    expect(forms.at(-1)).toContain(
      "Warning: This same billable call was made less than a minute ago; sending it again is charged again.",
    );
    await draft(other!.id);
    expect(forms.at(-1)).not.toContain("This same billable call");
    expect(
      sandbox.control.requests({ since: mark, routeId: "extraction_job_create" }),
    ).toHaveLength(1);
  });
});

describe("the memory of billable calls", () => {
  it("says how long ago in minutes", () => {
    expect(ago(0)).toBe("less than a minute ago");
    expect(ago(59_999)).toBe("less than a minute ago");
    expect(ago(60_000)).toBe("1 minute ago");
    expect(ago(125_000)).toBe("2 minutes ago");
  });

  it("forgets after an hour, and keeps at most its bound, oldest out first", async () => {
    let now = 1_000_000;
    const memory = new BilledInMemory(2, () => now);
    await memory.remember("a", { at: now, state: "succeeded" });
    await memory.remember("b", { at: now, state: "uncertain" });
    await memory.remember("c", { at: now, state: "succeeded" });
    expect(await memory.recall("a")).toBeNull();
    expect(await memory.recall("b")).toEqual({ at: now, state: "uncertain" });
    now += BILLED_TTL_MS;
    expect(await memory.recall("c")).toBeNull();
  });
});
