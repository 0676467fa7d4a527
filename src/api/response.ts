import { ApiError } from "../http/errors.js";
import type { HttpReply } from "../http/transport.js";

export const XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/**
 * A successful answer's body. JSON is parsed as is: decimal strings stay strings (spec part 2).
 * A workbook is checked (status, content type, zip signature) before it is handed back as bytes.
 */
export function readSuccessBody(
  reply: HttpReply,
  expected: "json" | "xlsx" | "binary",
  context: { operationId: string; requestId: string },
): unknown {
  const contentType = reply.headers["content-type"] ?? "";
  const unexpected = (why: string) =>
    new ApiError(`The Partner API answered ${context.operationId} with ${why}.`, {
      code: "unexpected_response",
      operationId: context.operationId,
      requestId: context.requestId,
      status: reply.status,
    });
  if (expected === "xlsx") {
    const declared =
      contentType.startsWith(XLSX_MIME) || contentType.startsWith("application/octet-stream");
    if (!declared)
      throw unexpected(`${contentType || "no content type"} where an XLSX workbook was expected`);
    if (!reply.body.subarray(0, 4).equals(ZIP_MAGIC))
      throw unexpected("bytes that are not an XLSX workbook");
    return reply.body;
  }
  // A file the contract announces: its bytes, whatever their type (the caller has it).
  if (expected === "binary" && !/\bjson\b/i.test(contentType)) return reply.body;
  if (reply.body.length === 0) return null;
  if (!/\bjson\b/i.test(contentType))
    throw unexpected(`${contentType || "no content type"} where JSON was expected`);
  try {
    return JSON.parse(reply.body.toString("utf8"));
  } catch {
    throw unexpected("JSON that does not parse");
  }
}

export interface ListPage<T = unknown> {
  items: T[];
  total: number;
}

/**
 * A list envelope in any of the shapes seen in the wild: a bare array, or an object holding
 * the array under `items`, `data` or `results`, with `total` (or `count`) beside it.
 */
export function asListPage<T = unknown>(data: unknown): ListPage<T> {
  if (Array.isArray(data)) return { items: data as T[], total: data.length };
  if (data && typeof data === "object") {
    const envelope = data as Record<string, unknown>;
    for (const key of ["items", "data", "results"]) {
      const items = envelope[key];
      if (Array.isArray(items)) {
        const total = [envelope.total, envelope.count].find(
          (n) => typeof n === "number" && Number.isFinite(n),
        );
        return { items: items as T[], total: (total as number | undefined) ?? items.length };
      }
    }
  }
  throw new TypeError("not a list: expected an array, or an object with items, data or results");
}

/** A value as an object of fields: itself when it is one, else an empty object. */
export const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/** Removes `share_token` at any depth: a last line of defence for complete objects. */
export function withoutShareTokens<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutShareTokens) as T;
  if (value && typeof value === "object" && !Buffer.isBuffer(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value))
      if (key !== "share_token") out[key] = withoutShareTokens(v);
    return out as T;
  }
  return value;
}
