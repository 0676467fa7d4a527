import { beforeAll, describe, expect, it } from "vitest";
import { DEMO_KEYS } from "../src/index.js";
import { PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

let full: PartnerTestClient;
let pm: PartnerTestClient;

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false });
beforeAll(() => {
  full = PartnerTestClient.for(env.sandbox, DEMO_KEYS.full);
  pm = PartnerTestClient.for(env.sandbox, DEMO_KEYS.portfolioManager);
});

const search = (client: PartnerTestClient, query: Record<string, string | number>) =>
  client.get("/search", { query });
const searchDocuments = (client: PartnerTestClient, body: unknown) =>
  client.call("POST", "/search/documents", { body });
const room = (prefix: string) => env.data.datarooms.find((d) => d.name.startsWith(prefix))!;

describe("search", () => {
  it("finds a record by its exact name first, ignoring case and accents", async () => {
    const operation = env.data.operations.find((o) => /[éÉèÎ]/.test(o.name))!;
    const typed = operation.name
      .normalize("NFD")
      .replace(/[\u0300-\u036f]/g, "")
      .toUpperCase();
    const { body } = await search(full, { q: typed });
    expect(body.items[0]).toMatchObject({
      type: "operation",
      id: operation.id,
      matched_on: "name",
      score: 1,
    });
  });

  it("finds operators and SPVs by their codes, documents by theirs", async () => {
    const operator = env.data.operators[0]!;
    const bySiren = await search(full, { q: operator.siren! });
    expect(bySiren.body.items[0]).toMatchObject({
      type: "operateur",
      id: operator.id,
      code: operator.siren,
      matched_on: "code",
    });
    const spv = env.data.spvs[3]!;
    const byExternal = await search(full, { q: spv.external_id.toLowerCase() });
    expect(byExternal.body.items[0]).toMatchObject({
      type: "spv",
      id: spv.id,
      code: spv.external_id,
    });
    const document = env.data.documents.find((d) => d.dataroom === null)!;
    const byCode = await search(full, { q: document.code });
    expect(byCode.body.items[0]).toMatchObject({ type: "document", id: document.id });
  });

  it("finds documents by their text, with the passage that matched", async () => {
    const { body } = await search(full, { q: "hypothèque conventionnelle", types: "document" });
    expect(body.total).toBeGreaterThan(0);
    for (const hit of body.items) {
      expect(hit).toMatchObject({ type: "document", matched_on: "text" });
      expect(hit.snippet.toLowerCase()).toContain("hypothèque");
    }
  });

  it("never returns a document of a dataroom the key is not in, not even by name", async () => {
    const sale = env.data.documents.find((d) => d.dataroom?.id === room("Data room – Cession").id)!;
    const byName = (client: PartnerTestClient) =>
      search(client, { q: sale.name, types: "document" });
    expect((await byName(full)).body.items.map((h: any) => h.id)).toContain(sale.id);
    expect((await byName(pm)).body.items.map((h: any) => h.id)).not.toContain(sale.id);
    const litigation = await search(full, { q: "mise en demeure" });
    expect(litigation.body.total).toBe(0);
  });

  it("filters by type, pages, and refuses what it cannot search", async () => {
    const all = await search(full, { q: "aurore", limit: 50 });
    const spvs = await search(full, { q: "aurore", types: "spv,fond", limit: 50 });
    expect(spvs.body.items.every((h: any) => h.type === "spv" || h.type === "fond")).toBe(true);
    expect(spvs.body.total).toBeLessThan(all.body.total);
    const second = await search(full, { q: "aurore", limit: 5, offset: 5 });
    expect(second.body.items).toEqual(all.body.items.slice(5, 10));
    const short = await search(full, { q: "a" });
    expect(short.status).toBe(422);
    expect(short.body.errors[0].field).toBe("q");
    const unknown = await search(full, { q: "aurore", types: "spv,projet" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].message).toContain("projet");
  });
});

describe("search of document content", () => {
  it("ranks documents holding every word, with the lines that matched", async () => {
    const { body } = await searchDocuments(full, {
      query: "garantie financière achèvement",
      limit: 50,
    });
    expect(body.total).toBeGreaterThan(5);
    for (const hit of body.items) {
      const document = env.data.documents.find((d) => d.id === hit.document_id)!;
      expect(document.text.toLowerCase()).toContain("achèvement");
      expect(hit.highlights.length).toBeGreaterThan(0);
    }
    const scores = body.items.map((h: any) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("filters by what the document is attached to and by category", async () => {
    const operation = env.data.operations.find((o) =>
      env.data.documents.some(
        (d) =>
          d.category === "contrat" &&
          d.text !== "" &&
          d.attachments.some((a) => a.target_id === o.id),
      ),
    )!;
    const { body } = await searchDocuments(full, {
      query: "montant engagé",
      filters: { operation_id: operation.id, category: "contrat" },
    });
    expect(body.total).toBe(1);
    expect(body.items[0].highlights.join(" ")).toContain("Montant engagé");
  });

  it("leaves out datarooms the key is not in, and refuses to filter on one (403)", async () => {
    const sale = room("Data room – Cession");
    const words = { query: "prix de cession" };
    expect((await searchDocuments(full, words)).body.total).toBe(1);
    expect((await searchDocuments(pm, words)).body.total).toBe(0);
    const refused = await searchDocuments(pm, { ...words, filters: { dataroom_id: sale.id } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      reason_code: "dataroom_access_denied",
      route_id: "search_documents",
    });
  });

  it("skips scans without text and refuses a query with no word", async () => {
    const scans = env.data.documents.filter((d) => d.file.kind === "pdf" && d.text === "");
    expect(scans.length).toBeGreaterThan(0);
    const { body } = await searchDocuments(full, { query: "procès-verbal assemblée", limit: 50 });
    for (const scan of scans)
      expect(body.items.map((h: any) => h.document_id)).not.toContain(scan.id);
    const empty = await searchDocuments(full, { query: "– –" });
    expect(empty.status).toBe(422);
    expect(empty.body.errors[0].field).toBe("query");
  });
});
