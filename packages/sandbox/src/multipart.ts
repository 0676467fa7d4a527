import { invalid, Problem } from "./problem.js";
import type { UploadedFile } from "./routing.js";

export interface ParsedUpload {
  /** The text fields, once each, for the route's body schema. */
  fields: Record<string, string>;
  /** The one file, under the route's file field. */
  file: UploadedFile;
}

/**
 * A multipart/form-data body (document upload). The bytes were read under the route's cap
 * already (413 over it); the parsing is the platform's own (WHATWG `Response.formData()`,
 * undici inside Node), which follows RFC 7578 and is maintained with Node itself, so the
 * sandbox needs no dependency and no hand-written boundary scanner. A field or file sent
 * twice, a missing file, a file under another field or text in the file field is refused
 * (422), never guessed.
 */
export async function parseUpload(
  raw: Buffer,
  contentType: string | undefined,
  fileField: string,
): Promise<ParsedUpload> {
  if (!/^multipart\/form-data\s*;.*\bboundary=/i.test(contentType ?? "")) {
    throw new Problem(415, "Send the body as multipart/form-data with a boundary.", {
      reasonCode: "unsupported_media_type",
    });
  }
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { "content-type": contentType ?? "" } }).formData();
  } catch {
    throw invalid(
      [{ field: "body", rule: "multipart/form-data", message: "is not a valid multipart body" }],
      "invalid_multipart",
    );
  }
  const fields: Record<string, string> = {};
  let file: UploadedFile | null = null;
  const seen = new Set<string>();
  for (const [name, value] of form.entries()) {
    if (seen.has(name))
      throw invalid([{ field: name, rule: "single value", message: "must be given once" }]);
    seen.add(name);
    if (typeof value === "string") {
      if (name === fileField)
        throw invalid([{ field: name, rule: "file", message: "must be a file, not a text field" }]);
      fields[name] = value;
    } else if (name === fileField) {
      file = {
        filename: value.name,
        contentType: value.type || "application/octet-stream",
        bytes: Buffer.from(await value.arrayBuffer()),
      };
    } else {
      throw invalid([
        { field: name, rule: `files only under ${fileField}`, message: "is not a file field" },
      ]);
    }
  }
  if (!file)
    throw invalid([{ field: fileField, rule: "required", message: "must carry the file" }]);
  return { fields, file };
}
