import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type SandboxKey, serviceAccount } from "../keys.js";
import { date } from "../models/common.js";
import {
  ATTACHMENT_TARGETS,
  type Attachment,
  type AttachmentTarget,
  attachmentSchema,
  DOCUMENT_CATEGORIES,
  type Document,
  documentListSchema,
  documentSchema,
  FILE_STATUSES,
  PDF_MIME,
  type StoredDocument,
  XLSX_MIME,
} from "../models/documents.js";
import { pdfText, renderPdf } from "../pdf.js";
import { invalid, notFound, Problem } from "../problem.js";
import { defineRoute, json, type UploadedFile } from "../routing.js";
import type { SandboxState } from "../state.js";
import { uuid } from "../validation.js";
import { tableWorkbook } from "../xlsx.js";
import { assertDataroomMember, openableDocuments, openDocument } from "./dataroom-access.js";
import { hasActiveJob } from "./extraction.js";
import { page, pageQuery } from "./pagination.js";

const documentParams = z.strictObject({ document_id: uuid });

/** The record as published: the file and its indexed text stay inside the sandbox. */
export function publicDocument(stored: StoredDocument): Document {
  const { file: _file, text: _text, ...document } = stored;
  return document;
}

/** Rendered workbooks, kept: their content never changes. */
const workbooks = new WeakMap<StoredDocument, Buffer>();

/** The file's bytes: rendered from the document's content, or as uploaded. */
async function fileBytes(document: StoredDocument): Promise<Buffer> {
  const { file } = document;
  if (file.kind === "upload") return file.bytes;
  if (file.kind === "pdf") return renderPdf(file).bytes;
  if (file.kind === "xlsx") {
    let bytes = workbooks.get(document);
    if (!bytes) {
      const [header = [], ...rows] = file.rows;
      bytes = await tableWorkbook([
        { name: file.sheet, columns: header.map((h) => ({ header: String(h) })), rows },
      ]);
      workbooks.set(document, bytes);
    }
    return bytes;
  }
  throw new Problem(409, `The file of document ${document.id} is ${document.file_status}.`, {
    reasonCode: "file_not_available",
  });
}

/**
 * Seeded files are sized (and PDFs paged) when first rendered, before any answer that shows
 * them; the record keeps the figures.
 */
async function sized(documents: readonly StoredDocument[]): Promise<Document[]> {
  for (const d of documents) {
    if (d.size_bytes !== null || d.file_status !== "available") continue;
    if (d.file.kind === "pdf") {
      const { bytes, pages } = renderPdf(d.file);
      Object.assign(d, { size_bytes: bytes.length, page_count: pages });
    } else d.size_bytes = (await fileBytes(d)).length;
  }
  return documents.map(publicDocument);
}

/** What each target type names, and how to find its record's name. */
function targetName(state: SandboxState, type: AttachmentTarget, id: string): string | null {
  const wanted = id.toLowerCase();
  const records: Record<AttachmentTarget, ReadonlyArray<{ id: string; name: string | null }>> = {
    operation: state.data.operations,
    operateur: state.data.operators,
    fond: state.data.funds,
    spv: state.data.spvs,
  };
  const record = records[type].find((r) => r.id === wanted);
  return record ? (record.name ?? "") : null;
}

function newAttachment(
  state: SandboxState,
  key: SandboxKey,
  type: AttachmentTarget,
  id: string,
  at: string,
  field: string,
): Attachment {
  const name = targetName(state, type, id);
  if (name === null) {
    throw invalid(
      [{ field, rule: "existing record", message: `names no ${type} of this entity` }],
      "reference_not_found",
    );
  }
  return {
    id: randomUUID(),
    target_type: type,
    target_id: id.toLowerCase(),
    target_name: name,
    attached_at: at,
    attached_by: serviceAccount(key),
  };
}

/** Files the sandbox accepts, with the bytes each must start with. */
const ACCEPTED_FILES: Record<string, { extension: string; magic: Buffer | null }> = {
  [PDF_MIME]: { extension: "pdf", magic: Buffer.from("%PDF-") },
  [XLSX_MIME]: { extension: "xlsx", magic: Buffer.from("PK\x03\x04", "latin1") },
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": {
    extension: "docx",
    magic: Buffer.from("PK\x03\x04", "latin1"),
  },
  "image/png": { extension: "png", magic: Buffer.from("\x89PNG", "latin1") },
  "image/jpeg": { extension: "jpg", magic: Buffer.from("\xff\xd8\xff", "latin1") },
  "text/plain": { extension: "txt", magic: null },
  "text/csv": { extension: "csv", magic: null },
};

/** The file's type: as sent, or from its extension when sent as octet-stream. */
function acceptedType(file: UploadedFile): string {
  let type = file.contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "application/octet-stream") {
    const extension = file.filename.split(".").at(-1)?.toLowerCase();
    type =
      Object.entries(ACCEPTED_FILES).find(([, f]) => f.extension === extension)?.[0] ??
      (extension === "jpeg" ? "image/jpeg" : type);
  }
  const accepted = ACCEPTED_FILES[type];
  if (!accepted) {
    throw invalid(
      [
        {
          field: "file",
          rule: `one of ${Object.keys(ACCEPTED_FILES).join(", ")}`,
          message: `files of type ${type || "unknown"} are not accepted`,
        },
      ],
      "unsupported_file_type",
    );
  }
  if (file.bytes.length === 0)
    throw invalid([{ field: "file", rule: "not empty", message: "is an empty file" }]);
  if (accepted.magic && !file.bytes.subarray(0, accepted.magic.length).equals(accepted.magic)) {
    throw invalid(
      [{ field: "file", rule: `${type} content`, message: `does not look like a ${type} file` }],
      "file_content_mismatch",
    );
  }
  return type;
}

/** What an indexer finds in an uploaded file: a PDF's shown text, a text file's lines. */
function uploadedText(type: string, bytes: Buffer): string {
  if (type === PDF_MIME) return pdfText(bytes) ?? "";
  if (type === "text/plain" || type === "text/csv") return bytes.toString("utf8");
  return "";
}

function nextCode(state: SandboxState): string {
  const highest = Math.max(0, ...state.data.documents.map((d) => Number(d.code.slice(4)) || 0));
  return `DOC-${String(highest + 1).padStart(5, "0")}`;
}

function safeFilename(name: string): string {
  const base = name.split(/[\\/]/).at(-1)?.trim() ?? "";
  const printable = [...(base || "document")].map((c) => (c < " " || c === '"' ? "_" : c));
  return printable.join("").slice(0, 200);
}

/** Content-Disposition with an ASCII fallback and the UTF-8 name (RFC 6266). */
function disposition(filename: string): string {
  const fallback = filename
    .normalize("NFD")
    .replace(/[^\x20-\x7e]/g, "")
    .replace(/"/g, "");
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

const listFilters = {
  category: z.enum(DOCUMENT_CATEGORIES).optional(),
  file_status: z.enum(FILE_STATUSES).optional(),
  ...pageQuery(100, 20),
};

/** Newest business date first; documents without one last. */
function byDate(a: StoredDocument, b: StoredDocument): number {
  return (
    (b.document_date ?? "").localeCompare(a.document_date ?? "") ||
    b.created_at.localeCompare(a.created_at) ||
    a.code.localeCompare(b.code)
  );
}

const attachedTo = (d: StoredDocument, type: AttachmentTarget, id: string | undefined) =>
  id === undefined ||
  d.attachments.some((a) => a.target_type === type && a.target_id === id.toLowerCase());

const text = (max: number) => z.string().trim().min(1).max(max);

const uploadFields = z.strictObject({
  name: text(200).optional(),
  category: z.enum(DOCUMENT_CATEGORIES),
  description: z.string().max(2000).optional(),
  document_date: date.optional(),
  operation_id: uuid.optional(),
  operateur_id: uuid.optional(),
  fond_id: uuid.optional(),
  spv_id: uuid.optional(),
  dataroom_id: uuid.optional(),
});

const LINK_FIELDS: ReadonlyArray<readonly [keyof z.output<typeof uploadFields>, AttachmentTarget]> =
  [
    ["operation_id", "operation"],
    ["operateur_id", "operateur"],
    ["fond_id", "fond"],
    ["spv_id", "spv"],
  ];

/** A document with no dataroom, for the contract test: every key with documents:read opens it. */
function openPdf(state: SandboxState, skip: (d: StoredDocument) => boolean = () => false) {
  return state.data.documents.find(
    (d) =>
      d.dataroom === null && d.file_status === "available" && d.file.kind === "pdf" && !skip(d),
  );
}

export const documentRoutes = [
  defineRoute({
    id: "documents_list",
    family: "documents",
    method: "GET",
    path: "/documents",
    scope: "documents:read",
    kind: "read",
    summary: "List documents, newest first",
    description:
      "Documents of a dataroom the key is not a member of are left out. Filters: what the document is attached to, its category, its file status, its dataroom.",
    query: z.strictObject({
      operation_id: uuid.optional(),
      operateur_id: uuid.optional(),
      fond_id: uuid.optional(),
      spv_id: uuid.optional(),
      dataroom_id: uuid.optional(),
      ...listFilters,
    }),
    response: { status: 200, schema: documentListSchema },
    refusals: { 403: ["dataroom_access_denied"], 404: ["dataroom_not_found"] },
    async handle({ query, state, key }) {
      if (query.dataroom_id !== undefined) assertDataroomMember(state, key, query.dataroom_id);
      const documents = openableDocuments(state, key)
        .filter(
          (d) =>
            attachedTo(d, "operation", query.operation_id) &&
            attachedTo(d, "operateur", query.operateur_id) &&
            attachedTo(d, "fond", query.fond_id) &&
            attachedTo(d, "spv", query.spv_id) &&
            (query.dataroom_id === undefined ||
              d.dataroom?.id === query.dataroom_id.toLowerCase()) &&
            (query.category === undefined || d.category === query.category) &&
            (query.file_status === undefined || d.file_status === query.file_status),
        )
        .sort(byDate);
      const { items, total } = page(documents, query);
      return json({ items: await sized(items), total });
    },
  }),
  defineRoute({
    id: "document_upload",
    family: "documents",
    method: "POST",
    path: "/documents",
    scope: "documents:write",
    kind: "write",
    summary: "Upload a document",
    description:
      "`multipart/form-data`: the file under `file` (PDF, XLSX, DOCX, PNG, JPEG, plain text or CSV; its first bytes must match its type) and the record's fields; the links attach it at once. The body is capped (413 over it). The text of PDFs and text files is indexed for search and extraction.",
    body: uploadFields,
    upload: { file: "file" },
    response: { status: 201, schema: documentSchema },
    refusals: {
      403: ["dataroom_access_denied"],
      404: ["dataroom_not_found"],
      422: ["unsupported_file_type", "file_content_mismatch", "reference_not_found"],
    },
    handle({ body, file, state, key, now }) {
      if (!file)
        throw invalid([{ field: "file", rule: "required", message: "must carry the file" }]);
      const type = acceptedType(file);
      if (body.dataroom_id !== undefined) assertDataroomMember(state, key, body.dataroom_id);
      const at = new Date(now()).toISOString();
      const attachments = LINK_FIELDS.flatMap(([field, target]) => {
        const id = body[field];
        return id === undefined ? [] : [newAttachment(state, key, target, id, at, field)];
      });
      const filename = safeFilename(file.filename);
      const indexed = uploadedText(type, file.bytes);
      const room = state.data.datarooms.find((d) => d.id === body.dataroom_id?.toLowerCase());
      const pages =
        type === PDF_MIME ? file.bytes.toString("latin1").match(/\/Type\s*\/Page(?!s)/g) : null;
      const document: StoredDocument = {
        id: randomUUID(),
        code: nextCode(state),
        name: body.name ?? (filename.replace(/\.[^.]+$/, "") || "document"),
        category: body.category,
        description: body.description ?? null,
        document_date: body.document_date ?? null,
        filename,
        content_type: type,
        size_bytes: file.bytes.length,
        page_count: pages && pages.length > 0 ? pages.length : null,
        file_status: "available",
        dataroom: room ? { id: room.id, name: room.name } : null,
        attachments,
        text_indexed: indexed !== "",
        uploaded_by: serviceAccount(key),
        created_at: at,
        updated_at: at,
        file: { kind: "upload", bytes: file.bytes },
        text: indexed,
      };
      state.data.documents.push(document);
      return json(publicDocument(document), 201);
    },
  }),
  defineRoute({
    id: "document_get",
    family: "documents",
    method: "GET",
    path: "/documents/{document_id}",
    scope: "documents:read",
    kind: "read",
    summary: "Get a document's record",
    params: documentParams,
    response: { status: 200, schema: documentSchema },
    refusals: { 403: ["dataroom_access_denied"], 404: ["document_not_found"] },
    async handle({ params, state, key }) {
      const [document] = await sized([openDocument(state, key, params.document_id)]);
      return json(document);
    },
  }),
  defineRoute({
    id: "document_update",
    family: "documents",
    method: "PATCH",
    path: "/documents/{document_id}",
    scope: "documents:write",
    kind: "write",
    summary: "Change a document's record",
    description:
      "Absent fields are left as they are; null clears `description` and `document_date`. `dataroom_id` moves the document into a dataroom (null: out of it); the key must be a member of both.",
    params: documentParams,
    body: z.strictObject({
      name: text(200).optional(),
      category: z.enum(DOCUMENT_CATEGORIES).optional(),
      description: z.string().max(2000).nullable().optional(),
      document_date: date.nullable().optional(),
      dataroom_id: uuid.nullable().optional(),
    }),
    response: { status: 200, schema: documentSchema },
    refusals: {
      403: ["dataroom_access_denied"],
      404: ["document_not_found", "dataroom_not_found"],
    },
    example: () => ({ body: { description: "Version validée par le comité." } }),
    async handle({ params, body, state, key, now }) {
      const document = openDocument(state, key, params.document_id);
      if (Object.keys(body).length === 0) {
        throw invalid([
          { field: "body", rule: "min 1 field", message: "send at least one field to change" },
        ]);
      }
      const { dataroom_id: roomId, ...fields } = body;
      if (roomId !== undefined && roomId !== null) assertDataroomMember(state, key, roomId);
      const changes = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
      Object.assign(document, changes, { updated_at: new Date(now()).toISOString() });
      if (roomId !== undefined) {
        const room = state.data.datarooms.find((d) => d.id === roomId?.toLowerCase());
        document.dataroom = room ? { id: room.id, name: room.name } : null;
      }
      const [shown] = await sized([document]);
      return json(shown);
    },
  }),
  defineRoute({
    id: "document_delete",
    family: "documents",
    method: "DELETE",
    path: "/documents/{document_id}",
    scope: "documents:write",
    kind: "write",
    summary: "Delete a document",
    description:
      "Not while an AI extraction job on it is queued or running (cancel it first); finished jobs keep their results.",
    params: documentParams,
    response: { status: 204 },
    refusals: {
      403: ["dataroom_access_denied"],
      404: ["document_not_found"],
      409: ["extraction_in_progress"],
    },
    example: ({ state }) => {
      // The newest upload (the contract walk's own), else a seeded open document nothing uses.
      const busy = new Set(state.data.extractionJobs.map((j) => j.document_id));
      const uploaded = state.data.documents.findLast(
        (d) => d.file.kind === "upload" && d.dataroom === null,
      );
      const document = uploaded ?? openPdf(state, (d) => busy.has(d.id));
      return document ? { params: { document_id: document.id } } : {};
    },
    handle({ params, state, key, now }) {
      const document = openDocument(state, key, params.document_id);
      if (hasActiveJob(state, document.id, now())) {
        throw new Problem(
          409,
          `Document ${document.id} has an AI extraction job queued or running; cancel it first.`,
          { reasonCode: "extraction_in_progress" },
        );
      }
      state.data.documents.splice(state.data.documents.indexOf(document), 1);
      return { status: 204 };
    },
  }),
  defineRoute({
    id: "document_download",
    family: "documents",
    method: "GET",
    path: "/documents/{document_id}/download",
    scope: "documents:read",
    kind: "read",
    summary: "Download a document's file",
    description:
      "The file's bytes with its content type. 409 `file_not_available` when the file is archived or was never received; 403 `dataroom_access_denied` when the document is in a dataroom the key is not a member of.",
    params: documentParams,
    response: { status: 200, binary: Object.keys(ACCEPTED_FILES) },
    refusals: {
      403: ["dataroom_access_denied"],
      404: ["document_not_found"],
      409: ["file_not_available"],
    },
    example: ({ state }) => {
      const document = openPdf(state);
      return document ? { params: { document_id: document.id } } : {};
    },
    async handle({ params, state, key }) {
      const document = openDocument(state, key, params.document_id);
      return {
        status: 200,
        bytes: await fileBytes(document),
        contentType: document.content_type,
        headers: { "Content-Disposition": disposition(document.filename) },
      };
    },
  }),
  defineRoute({
    id: "document_attachment_create",
    family: "documents",
    method: "POST",
    path: "/documents/{document_id}/attachments",
    scope: "documents:write",
    kind: "write",
    summary: "Attach a document to an operation, operator, fund or SPV",
    params: documentParams,
    body: z.strictObject({ target_type: z.enum(ATTACHMENT_TARGETS), target_id: uuid }),
    response: { status: 201, schema: attachmentSchema },
    refusals: {
      403: ["dataroom_access_denied"],
      404: ["document_not_found"],
      409: ["already_attached"],
      422: ["reference_not_found"],
    },
    example: ({ state }) => {
      const document = openPdf(state);
      const target = state.data.operations.find(
        (o) => !document?.attachments.some((a) => a.target_id === o.id),
      );
      return document && target
        ? {
            params: { document_id: document.id },
            body: { target_type: "operation", target_id: target.id },
          }
        : {};
    },
    handle({ params, body, state, key, now }) {
      const document = openDocument(state, key, params.document_id);
      const targetId = body.target_id.toLowerCase();
      if (
        document.attachments.some(
          (a) => a.target_type === body.target_type && a.target_id === targetId,
        )
      ) {
        throw new Problem(
          409,
          `Document ${document.id} is already attached to ${body.target_type} ${targetId}.`,
          {
            reasonCode: "already_attached",
          },
        );
      }
      const at = new Date(now()).toISOString();
      const attachment = newAttachment(state, key, body.target_type, targetId, at, "target_id");
      document.attachments.push(attachment);
      document.updated_at = at;
      return json(attachment, 201);
    },
  }),
  defineRoute({
    id: "document_attachment_delete",
    family: "documents",
    method: "DELETE",
    path: "/documents/{document_id}/attachments/{attachment_id}",
    scope: "documents:write",
    kind: "write",
    summary: "Detach a document",
    description: "The document itself stays, even with no attachment left.",
    params: z.strictObject({ document_id: uuid, attachment_id: uuid }),
    response: { status: 204 },
    refusals: {
      403: ["dataroom_access_denied"],
      404: ["document_not_found", "attachment_not_found"],
    },
    example: ({ state }) => {
      const document = state.data.documents.find(
        (d) => d.dataroom === null && d.attachments.length > 1,
      );
      const attachment = document?.attachments.at(-1);
      return document && attachment
        ? { params: { document_id: document.id, attachment_id: attachment.id } }
        : {};
    },
    handle({ params, state, key, now }) {
      const document = openDocument(state, key, params.document_id);
      const index = document.attachments.findIndex(
        (a) => a.id === params.attachment_id.toLowerCase(),
      );
      if (index === -1) throw notFound("attachment", params.attachment_id, "attachment_not_found");
      document.attachments.splice(index, 1);
      document.updated_at = new Date(now()).toISOString();
      return { status: 204 };
    },
  }),
  defineRoute({
    id: "operation_documents_list",
    family: "documents",
    method: "GET",
    path: "/operations/{operation_id}/documents",
    scope: "documents:read",
    kind: "read",
    summary: "List an operation's documents, newest first",
    description: "Documents of a dataroom the key is not a member of are left out.",
    params: z.strictObject({ operation_id: uuid }),
    query: z.strictObject(listFilters),
    response: { status: 200, schema: documentListSchema },
    refusals: { 404: ["operation_not_found"] },
    async handle({ params, query, state, key }) {
      const operation = state.operation(params.operation_id);
      const documents = openableDocuments(state, key)
        .filter(
          (d) =>
            attachedTo(d, "operation", operation.id) &&
            (query.category === undefined || d.category === query.category) &&
            (query.file_status === undefined || d.file_status === query.file_status),
        )
        .sort(byDate);
      const { items, total } = page(documents, query);
      return json({ items: await sized(items), total });
    },
  }),
];
