import { randomBytes } from "node:crypto";
import { invalidInput } from "../http/errors.js";

/** A file as the model gives one in a multipart body (see contract/validators.ts). */
interface FileField {
  filename: string;
  content_type?: string;
  content_base64?: string;
  text?: string;
}

const isFile = (value: unknown): value is FileField =>
  typeof value === "object" && value !== null && "filename" in value;

/**
 * A multipart/form-data body (RFC 7578): one part per field, files with their name and type.
 * Built once, before any retry, so every attempt sends the same bytes.
 */
export function multipartBody(
  operationId: string,
  body: unknown,
): { bytes: Buffer; contentType: string } {
  const boundary = `----portfolio-mcp-${randomBytes(12).toString("hex")}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    if (isFile(value)) {
      parts.push(
        header(boundary, name, value.filename, value.content_type ?? guessType(value.filename)),
        fileBytes(operationId, name, value),
      );
    } else {
      const text = typeof value === "object" ? JSON.stringify(value) : String(value);
      parts.push(header(boundary, name), Buffer.from(text, "utf8"));
    }
    parts.push(Buffer.from("\r\n"));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    bytes: Buffer.concat(parts),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

function header(boundary: string, name: string, filename?: string, type?: string): Buffer {
  const quoted = (s: string) => s.replace(/["\r\n\\]/g, "_");
  const disposition = `form-data; name="${quoted(name)}"${filename === undefined ? "" : `; filename="${quoted(filename)}"`}`;
  const lines = [`--${boundary}`, `Content-Disposition: ${disposition}`];
  if (type) lines.push(`Content-Type: ${type}`);
  return Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "utf8");
}

function fileBytes(operationId: string, field: string, file: FileField): Buffer {
  if (file.content_base64 !== undefined) {
    const clean = file.content_base64.replace(/\s+/g, "");
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1)
      throw invalidInput(operationId, [
        { field: `${field}.content_base64`, rule: "base64", message: "must be base64" },
      ]);
    return Buffer.from(clean, "base64");
  }
  if (file.text !== undefined) return Buffer.from(file.text, "utf8");
  throw invalidInput(operationId, [
    {
      field: `${field}.content_base64`,
      rule: "required",
      message: "is required (or text, for a text file)",
    },
  ]);
}

const TYPES: Record<string, string> = {
  pdf: "application/pdf",
  txt: "text/plain",
  csv: "text/csv",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
};

function guessType(filename: string): string {
  return TYPES[filename.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";
}
