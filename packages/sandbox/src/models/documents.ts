import { z } from "zod";
import { component, date, dateTime, pageOf, uuid } from "./common.js";

/** Documents: fields not shown by the spec, the sandbox's choice (README). */

export const PDF_MIME = "application/pdf";
export const XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

export const DOCUMENT_CATEGORIES = [
  "reporting",
  "contrat",
  "juridique",
  "financier",
  "technique",
  "kyc",
  "commercialisation",
  "comite",
  "autre",
] as const;
export type DocumentCategory = (typeof DOCUMENT_CATEGORIES)[number];

/**
 * Whether the file can be downloaded: `archived` files went to cold storage, `missing` ones
 * were never received (a checklist entry waiting for the operator).
 */
export const FILE_STATUSES = ["available", "archived", "missing"] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

/** What a document can be attached to (spec part 1: operations, operators, funds, SPVs). */
export const ATTACHMENT_TARGETS = ["operation", "operateur", "fond", "spv"] as const;
export type AttachmentTarget = (typeof ATTACHMENT_TARGETS)[number];

export const attachmentSchema = component(
  "DocumentAttachment",
  z.object({
    id: uuid,
    target_type: z.enum(ATTACHMENT_TARGETS),
    target_id: uuid,
    /** The record's name when attached, for display. */
    target_name: z.string(),
    attached_at: dateTime,
    attached_by: z.string(),
  }),
);
export type Attachment = z.output<typeof attachmentSchema>;

export const documentSchema = component(
  "Document",
  z.object({
    id: uuid,
    /** The entity's reference for the document, searchable like its name. */
    code: z.string(),
    name: z.string(),
    category: z.enum(DOCUMENT_CATEGORIES),
    description: z.string().nullable(),
    /** The business date the document is about (a reporting date, a signature date). */
    document_date: date.nullable(),
    filename: z.string(),
    content_type: z.string(),
    /** Size of the file in bytes; null while the file is not available. */
    size_bytes: z.int().min(0).nullable(),
    page_count: z.int().min(1).nullable(),
    file_status: z.enum(FILE_STATUSES),
    /** The dataroom the document belongs to: only its members may open it. */
    dataroom: z.object({ id: uuid, name: z.string() }).nullable(),
    attachments: z.array(attachmentSchema),
    /** Whether the file's text is in the search index (search_documents, AI extraction). */
    text_indexed: z.boolean(),
    uploaded_by: z.string(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type Document = z.output<typeof documentSchema>;

export const documentListSchema = component("DocumentList", pageOf(documentSchema));

/** Where a stored document's bytes come from: rendered from its content, or as uploaded. */
export type DocumentFile =
  | { kind: "pdf"; title: string; lines: string[] }
  | { kind: "xlsx"; sheet: string; rows: Array<Array<string | number>> }
  | { kind: "upload"; bytes: Buffer }
  | { kind: "none" };

/** A document as the sandbox keeps it: the record, its file and the text it indexed. */
export interface StoredDocument extends Document {
  file: DocumentFile;
  /** Indexed text: what search_documents and extraction read; empty when not indexed. */
  text: string;
}

/**
 * A dataroom: documents only its members may open. Members are user ids and API keys, a key
 * being known by its service account (`apikey:<key_id>`), the identity that signs its writes.
 */
export interface Dataroom {
  id: string;
  name: string;
  operation_id: string | null;
  members: string[];
}
