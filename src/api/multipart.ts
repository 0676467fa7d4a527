import { randomBytes } from "node:crypto";
import type { FieldError } from "@portfolio-mcp/field-errors";
import { invalidInput } from "../http/errors.js";

/** A file as the model gives one in a multipart body (see contract/validators.ts). */
export interface FileField {
  filename: string;
  content_type?: string;
  content_base64?: string;
  text?: string;
}

export const isFile = (value: unknown): value is FileField =>
  typeof value === "object" && value !== null && "filename" in value;

/** A CR, LF or NUL ends or breaks a header line: the rest would be a header of its own. */
const HEADER_BREAK = /[\r\n\0]/;
const TOKEN = "[\\w!#$%&'*+.^`|~-]+";
/** type/subtype, then parameters (RFC 9110, 8.3.1). */
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\]*"))*$`);

/**
 * A multipart/form-data body (RFC 7578): one part per field, files with their name and type.
 * Built once, before any retry, so every attempt sends the same bytes. The client builds it
 * when a write is drafted too, so a value that cannot be a header line is refused then.
 */
export function multipartBody(
  operationId: string,
  body: unknown,
): { bytes: Buffer; contentType: string } {
  const fields = (body ?? {}) as Record<string, unknown>;
  const refused = headerValueErrors(fields);
  if (refused.length > 0) throw invalidInput(operationId, refused);
  const boundary = `----portfolio-mcp-${randomBytes(12).toString("hex")}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
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

/** Every value that becomes part of a header line: field names, file names, file types. */
function headerValueErrors(fields: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const check = (field: string, value: string) => {
    if (HEADER_BREAK.test(value))
      errors.push({
        field,
        rule: "one header line",
        message: "must not contain CR, LF or NUL (it is sent in a header line)",
      });
    return !HEADER_BREAK.test(value);
  };
  for (const [name, value] of Object.entries(fields)) {
    check(name, name);
    if (value === undefined || value === null || !isFile(value)) continue;
    check(`${name}.filename`, String(value.filename));
    if (value.content_type === undefined) continue;
    const type = String(value.content_type);
    if (check(`${name}.content_type`, type) && !MEDIA_TYPE.test(type))
      errors.push({
        field: `${name}.content_type`,
        rule: "media type",
        message: "must be a media type such as application/pdf or text/plain; charset=utf-8",
      });
  }
  return errors;
}

function header(boundary: string, name: string, filename?: string, type?: string): Buffer {
  // A quote is written %22, as browsers write it (WHATWG, multipart/form-data encoding) and as
  // parsers read it back; CR, LF and NUL never get here.
  const quoted = (s: string) => s.replace(/"/g, "%22");
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
