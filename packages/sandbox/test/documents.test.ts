import { beforeAll, describe, expect, it } from "vitest";
import { DEMO_KEYS } from "../src/index.js";
import { pdfText, renderPdf } from "../src/pdf.js";
import { PartnerTestClient } from "./helpers/partner-client.js";
import { sharedSandbox } from "./helpers/sandbox-per-test.js";

let full: PartnerTestClient;
let pm: PartnerTestClient;
let readOnly: PartnerTestClient;

// One sandbox for the whole file: these tests do not depend on each other's writes.
const env = sharedSandbox({ rateLimit: false, maxUploadBytes: 64 * 1024 });
beforeAll(() => {
  full = PartnerTestClient.for(env.sandbox, DEMO_KEYS.full);
  pm = PartnerTestClient.for(env.sandbox, DEMO_KEYS.portfolioManager);
  readOnly = PartnerTestClient.for(env.sandbox, DEMO_KEYS.readOnly);
});

const room = (prefix: string) => {
  const found = env.data.datarooms.find((d) => d.name.startsWith(prefix));
  if (!found) throw new Error(`no dataroom ${prefix}`);
  return found;
};
const docIn = (roomId: string) => env.data.documents.find((d) => d.dataroom?.id === roomId)!;
const openDoc = (test: (d: (typeof env.data)["documents"][number]) => boolean) =>
  env.data.documents.find((d) => d.dataroom === null && test(d))!;

/** A multipart upload as fetch sends it, with the client's bearer. */
async function upload(
  client: PartnerTestClient,
  fields: Record<string, string>,
  file: { bytes: Buffer; type: string; name: string } | null,
  idempotencyKey = `upload-${Math.random().toString(36).slice(2)}`,
) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append("file", new Blob([file.bytes], { type: file.type }), file.name);
  const res = await fetch(`${env.sandbox.baseUrl}/documents`, {
    method: "POST",
    headers: { authorization: `Bearer ${await client.token()}`, "idempotency-key": idempotencyKey },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Every object the cross-reference table points at starts where it says. */
function checkXref(pdf: Buffer): void {
  const text = pdf.toString("latin1");
  expect(text.startsWith("%PDF-1.4")).toBe(true);
  expect(text.trimEnd().endsWith("%%EOF")).toBe(true);
  const start = Number(/startxref\n(\d+)\n%%EOF/.exec(text)?.[1]);
  expect(text.slice(start, start + 4)).toBe("xref");
  const offsets = [...text.slice(start).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
  expect(offsets.length).toBeGreaterThan(5);
  for (const [i, offset] of offsets.entries())
    expect(text.slice(offset).startsWith(`${i + 1} 0 obj`)).toBe(true);
}

describe("seeded documents", () => {
  it("are attached to operations, operators, funds and SPVs, newest first", async () => {
    const { body } = await full.get("/documents", { query: { limit: 100 } });
    expect(body.total).toBeGreaterThan(100);
    const targets = new Set(
      env.data.documents.flatMap((d) => d.attachments.map((a) => a.target_type)),
    );
    expect(targets).toEqual(new Set(["operation", "operateur", "fond", "spv"]));
    const dates = body.items.map((d: any) => d.document_date ?? "");
    expect(dates).toEqual([...dates].sort().reverse());
    const operation = env.data.operations.find((o) =>
      env.data.documents.some((d) => d.attachments.some((a) => a.target_id === o.id)),
    )!;
    const mine = await full.get(`/operations/${operation.id}/documents`);
    expect(mine.body.total).toBeGreaterThan(0);
    for (const d of mine.body.items)
      expect(d.attachments.some((a: any) => a.target_id === operation.id)).toBe(true);
    const byFilter = await full.get("/documents", { query: { operation_id: operation.id } });
    expect(byFilter.body.total).toBe(mine.body.total);
  });

  it("download as real PDFs whose text is the operation's own figures", async () => {
    const report = openDoc(
      (d) => d.category === "reporting" && d.attachments[0]?.target_type === "operation",
    );
    const operation = env.data.operations.find((o) => o.id === report.attachments[0]!.target_id)!;
    const reply = await full.get(`/documents/${report.id}/download`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("application/pdf");
    expect(reply.headers.get("content-disposition")).toContain(`filename="${report.filename}"`);
    checkXref(reply.body);
    expect(reply.body.length).toBe(report.size_bytes);
    const text = pdfText(reply.body)!;
    expect(text).toContain(operation.name);
    const rate = String(operation.data.taux_commercialisation).replace(".", ",");
    expect(text).toContain(`Taux de commercialisation : ${rate} %`);
  });

  it("include workbooks, served as XLSX and sized once rendered", async () => {
    const grid = openDoc((d) => d.file.kind === "xlsx");
    const reply = await full.get(`/documents/${grid.id}/download`);
    expect(reply.headers.get("content-type")).toBe(
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    );
    expect(reply.body.subarray(0, 4).toString("latin1")).toBe("PK\x03\x04");
    const { body } = await full.get(`/documents/${grid.id}`);
    expect(body.size_bytes).toBe(reply.body.length);
    const { default: ExcelJS } = await import("exceljs");
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(reply.body as unknown as ArrayBuffer);
    expect(workbook.worksheets[0]!.getRow(1).getCell(1).value).toBe("Lot");
  });

  it("refuse a file that is archived or was never received, with its status", async () => {
    for (const status of ["archived", "missing"] as const) {
      const document = env.data.documents.find((d) => d.file_status === status)!;
      expect(document.size_bytes).toBeNull();
      const reply = await full.get(`/documents/${document.id}/download`);
      expect(reply.status, status).toBe(409);
      expect(reply.body).toMatchObject({
        reason_code: "file_not_available",
        route_id: "document_download",
      });
      expect(reply.body.detail).toContain(status);
    }
    expect(
      (await full.get("/documents/0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40")).body.reason_code,
    ).toBe("document_not_found");
  });
});

describe("dataroom rights", () => {
  it("let each key open the datarooms it is a member of, and refuse the others 403", async () => {
    const refinancing = docIn(room("Data room – Refinancement").id);
    const sale = docIn(room("Data room – Cession").id);
    const litigation = docIn(room("Data room – Précontentieux").id);
    const cases: Array<[PartnerTestClient, string, typeof refinancing, boolean]> = [
      [full, "full", refinancing, true],
      [full, "full", sale, true],
      [full, "full", litigation, false],
      [pm, "pm", refinancing, true],
      [pm, "pm", sale, false],
      [readOnly, "read-only", refinancing, true],
      [readOnly, "read-only", sale, false],
    ];
    for (const [client, who, document, allowed] of cases) {
      for (const path of [`/documents/${document.id}`, `/documents/${document.id}/download`]) {
        const reply = await client.get(path);
        expect(reply.status, `${who} ${path}`).toBe(allowed ? 200 : 403);
        if (!allowed) expect(reply.body.reason_code).toBe("dataroom_access_denied");
      }
      const listed = await client.get("/documents", {
        query: { limit: 100, category: document.category },
      });
      expect(
        listed.body.items.some((d: any) => d.id === document.id),
        `${who} lists ${document.name}`,
      ).toBe(allowed);
    }
    const refused = await pm.get("/documents", {
      query: { dataroom_id: room("Data room – Cession").id },
    });
    expect(refused.status).toBe(403);
  });

  it("follow the members list: a key added to a dataroom opens its documents", async () => {
    const litigation = room("Data room – Précontentieux");
    const document = docIn(litigation.id);
    expect((await full.get(`/documents/${document.id}/download`)).status).toBe(403);
    litigation.members.push("apikey:sandboxdemo");
    try {
      expect((await full.get(`/documents/${document.id}/download`)).status).toBe(200);
    } finally {
      litigation.members.pop();
    }
  });

  it("guard writes and moves: a key cannot move a document into a dataroom it is not in", async () => {
    const document = openDoc((d) => d.category === "kyc");
    const sale = room("Data room – Cession");
    const refused = await pm.write("PATCH", `/documents/${document.id}`, { dataroom_id: sale.id });
    expect(refused.status).toBe(403);
    const moved = await full.write("PATCH", `/documents/${document.id}`, { dataroom_id: sale.id });
    expect(moved.body.dataroom).toEqual({ id: sale.id, name: sale.name });
    expect((await pm.get(`/documents/${document.id}`)).status).toBe(403);
    const back = await full.write("PATCH", `/documents/${document.id}`, { dataroom_id: null });
    expect(back.body.dataroom).toBeNull();
    expect((await pm.get(`/documents/${document.id}`)).status).toBe(200);
  });
});

describe("uploads", () => {
  const operation = () => env.data.operations.find((o) => o.status === "travaux")!;
  const pdf = () =>
    renderPdf({
      title: "Procès-verbal de chantier",
      lines: ["Réception des façades : conforme au planning."],
    }).bytes;

  it("store the file, attach it, index its text and serve it back byte for byte", async () => {
    const bytes = pdf();
    const reply = await upload(
      pm,
      { category: "technique", operation_id: operation().id, document_date: "2026-03-31" },
      { bytes, type: "application/pdf", name: "pv-chantier.pdf" },
    );
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      name: "pv-chantier",
      filename: "pv-chantier.pdf",
      category: "technique",
      size_bytes: bytes.length,
      page_count: 1,
      file_status: "available",
      text_indexed: true,
      uploaded_by: "apikey:sandboxpm",
      dataroom: null,
    });
    expect(reply.body.code).toMatch(/^DOC-\d{5}$/);
    expect(reply.body.attachments[0]).toMatchObject({
      target_type: "operation",
      target_id: operation().id,
      target_name: operation().name,
    });
    const back = await pm.get(`/documents/${reply.body.id}/download`);
    expect(Buffer.compare(back.body, bytes)).toBe(0);
    const found = await pm.call("POST", "/search/documents", {
      body: { query: "façades conforme" },
    });
    expect(found.body.items.map((h: any) => h.document_id)).toContain(reply.body.id);
  });

  it("refuse a body over the cap with 413 before anything is stored", async () => {
    const before = env.data.documents.length;
    const big = Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.alloc(70 * 1024, 0x20)]);
    const reply = await upload(
      full,
      { category: "autre" },
      { bytes: big, type: "application/pdf", name: "gros.pdf" },
    );
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({
      reason_code: "payload_too_large",
      route_id: "document_upload",
    });
    expect(env.data.documents.length).toBe(before);
  });

  it("refuse a file whose bytes are not its type, a type it does not take, a missing file", async () => {
    const fake = await upload(
      full,
      { category: "autre" },
      { bytes: Buffer.from("bonjour"), type: "application/pdf", name: "x.pdf" },
    );
    expect(fake.status).toBe(422);
    expect(fake.body).toMatchObject({ reason_code: "file_content_mismatch" });
    expect(fake.body.errors[0].field).toBe("file");
    const exe = await upload(
      full,
      { category: "autre" },
      { bytes: Buffer.from("MZ"), type: "application/x-msdownload", name: "x.exe" },
    );
    expect(exe.body.reason_code).toBe("unsupported_file_type");
    const none = await upload(full, { category: "autre" }, null);
    expect(none.status).toBe(422);
    expect(none.body.errors[0].field).toBe("file");
    const category = await upload(
      full,
      { category: "divers" },
      { bytes: pdf(), type: "application/pdf", name: "x.pdf" },
    );
    expect(category.body.errors[0].field).toBe("category");
  });

  it("refuse an upload into a dataroom the key is not a member of, or a link to nothing", async () => {
    const sale = room("Data room – Cession");
    const refused = await upload(
      pm,
      { category: "juridique", dataroom_id: sale.id },
      { bytes: pdf(), type: "application/pdf", name: "x.pdf" },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.reason_code).toBe("dataroom_access_denied");
    const dangling = await upload(
      full,
      { category: "juridique", spv_id: "0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40" },
      { bytes: pdf(), type: "application/pdf", name: "x.pdf" },
    );
    expect(dangling.body).toMatchObject({ reason_code: "reference_not_found" });
    expect(dangling.body.errors[0].field).toBe("spv_id");
  });

  it("replay the same upload under the same Idempotency-Key without storing it twice", async () => {
    const file = { bytes: pdf(), type: "application/pdf", name: "rejoue.pdf" };
    const first = await upload(full, { category: "autre" }, file, "upload-replay");
    const count = env.data.documents.length;
    const again = await upload(full, { category: "autre" }, file, "upload-replay");
    expect(again.body.id).toBe(first.body.id);
    expect(env.data.documents.length).toBe(count);
  });
});

describe("attachments and deletion", () => {
  it("attach once to an existing record, detach, and refuse what makes no sense", async () => {
    const document = openDoc((d) => d.category === "financier" && d.file.kind === "pdf");
    const fund = env.data.funds[0]!;
    const path = `/documents/${document.id}/attachments`;
    const created = await full.write("POST", path, { target_type: "fond", target_id: fund.id });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      target_type: "fond",
      target_id: fund.id,
      target_name: fund.name,
    });
    const twice = await full.write("POST", path, { target_type: "fond", target_id: fund.id });
    expect(twice.body.reason_code).toBe("already_attached");
    const nowhere = await full.write("POST", path, {
      target_type: "operation",
      target_id: "0b7c3f5e-2a41-4d2e-9b7e-8d4a1c2e3f40",
    });
    expect(nowhere.body.reason_code).toBe("reference_not_found");
    const listed = await full.get("/documents", { query: { fond_id: fund.id, limit: 100 } });
    expect(listed.body.items.map((d: any) => d.id)).toContain(document.id);
    const detach = (id: string, n: number) =>
      full.call("DELETE", `${path}/${id}`, { idempotencyKey: `detach-${id}-${n}` });
    expect((await detach(created.body.id, 1)).status).toBe(204);
    expect((await detach(created.body.id, 2)).body.reason_code).toBe("attachment_not_found");
  });

  it("refuse to delete a document while an extraction job on it runs, then delete it", async () => {
    const document = openDoc(
      (d) =>
        d.category === "reporting" && !env.data.extractionJobs.some((j) => j.document_id === d.id),
    );
    const job = await full.write("POST", `/documents/${document.id}/extraction-jobs`, undefined);
    expect(job.status).toBe(202);
    const remove = (n: string) =>
      full.call("DELETE", `/documents/${document.id}`, {
        idempotencyKey: `delete-${document.id}-${n}`,
      });
    const busy = await remove("1");
    expect(busy.status).toBe(409);
    expect(busy.body.reason_code).toBe("extraction_in_progress");
    await full.write("POST", `/ai-extraction/jobs/${job.body.id}/cancel`, undefined);
    expect((await remove("2")).status).toBe(204);
    expect((await full.get(`/documents/${document.id}`)).status).toBe(404);
    // The job outlives its document.
    expect((await full.get(`/ai-extraction/jobs/${job.body.id}`)).body.status).toBe("cancelled");
  });
});
