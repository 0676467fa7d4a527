import type { Operation } from "../api/catalogue.js";
import { sensitivity } from "../api/offer.js";
import { record } from "../api/response.js";
import type { ToolContext } from "../inventory/types.js";
import { quote } from "../writes/display.js";
import type { Preview } from "../writes/intent.js";

/** The fields a record is known by, in the order people would name it. */
const NAME_FIELDS = ["name", "title", "label", "display_name", "filename", "email", "subject"];

/**
 * What a person approves for any write of the contract, built from its schema: the summary as
 * the action, the target by name (looked up through the read that shows it), only the fields
 * given (null shown as cleared; decimals as written), and warnings for what deserves one.
 */
export async function longTailPreview(
  op: Operation,
  input: { path: Record<string, unknown>; query: Record<string, unknown>; body: unknown },
  ctx: ToolContext,
): Promise<Omit<Preview, "recorded_as">> {
  const body = input.body && typeof input.body === "object" ? (input.body as object) : {};
  return {
    action: op.summary || op.id,
    target: await targetOf(op, input.path, body as Record<string, unknown>, ctx),
    fields: { ...shownFields(input.query), ...shownFields(body as Record<string, unknown>) },
    billable: op.contract?.billable ?? false,
    warnings: warningsOf(op),
  };
}

/**
 * The record a write touches, by name: the longest read whose path is a prefix of the write's
 * and needs no other parameter (`/alerts/{alert_id}` for `/alerts/{alert_id}/acknowledge`). When
 * there is none, or it is refused, the ids are shown; a creation is named by what it creates.
 */
async function targetOf(
  op: Operation,
  path: Record<string, unknown>,
  body: Record<string, unknown>,
  ctx: ToolContext,
): Promise<string> {
  const ids = Object.entries(path).map(([name, value]) => `${name} ${String(value)}`);
  const read = subjectRead(op, ctx);
  if (read) {
    const wanted = placeholders(read.path);
    try {
      const result = await ctx.api.send(
        read,
        { path: Object.fromEntries(wanted.map((name) => [name, path[name]])) },
        { signal: ctx.signal, delegatedUser: ctx.session.delegatedUser },
      );
      const name = nameOf(record(result.data));
      if (name) {
        const others = ids.filter((id) => !wanted.some((w) => id.startsWith(`${w} `)));
        return [`${read.family} ${quote(name)}`, ...others].join(", ");
      }
    } catch {
      // Refused or gone: the ids say what the write targets; the API decides.
    }
  }
  if (ids.length > 0) return ids.join(", ");
  const created = nameOf(body);
  return created ? `a new record in ${op.family}: ${quote(created)}` : `${op.family}`;
}

function subjectRead(op: Operation, ctx: ToolContext): Operation | null {
  const segments = op.path.split("/");
  for (let end = segments.length; end > 1; end--) {
    if (!/^\{.+\}$/.test(segments[end - 1] ?? "")) continue;
    const prefix = segments.slice(0, end).join("/");
    for (const candidate of ctx.api.routes.values())
      if (candidate.method === "GET" && candidate.kind === "read" && candidate.path === prefix)
        return candidate;
  }
  return null;
}

const placeholders = (path: string) => [...path.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1] ?? "");

function nameOf(value: Record<string, unknown>): string | null {
  for (const field of NAME_FIELDS) {
    const name = value[field];
    if (typeof name === "string" && name.trim() !== "") return name;
  }
  return null;
}

/** The fields as given, files by name, type and size rather than by content. */
function shownFields(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, isFile(value) ? describeFile(value) : value]),
  );
}

interface FileValue {
  filename: string;
  content_type?: string;
  content_base64?: string;
  text?: string;
}

const isFile = (value: unknown): value is FileValue =>
  typeof value === "object" && value !== null && "filename" in value;

function describeFile(file: FileValue): string {
  const bytes =
    file.content_base64 !== undefined
      ? Buffer.from(file.content_base64, "base64").length
      : Buffer.byteLength(file.text ?? "", "utf8");
  return `file ${file.filename} (${file.content_type ?? "type from its name"}, ${bytes} bytes)`;
}

/** Deletions, irreversible requests, bulk changes and sensitive areas are said out loud. */
export function warningsOf(op: Operation): string[] {
  const warnings: string[] = [];
  if (op.method === "DELETE") warnings.push("This deletes the record.");
  if (op.capability === "rgpd_erasure" || /erasure/.test(op.id))
    warnings.push("Irreversible: the personal data will be erased, and no route withdraws this.");
  if (/(^|_)(all|bulk|batch|reorder)(_|$)|-all$/.test(`${op.id}${op.path}`))
    warnings.push("This changes many records at once.");
  const sensitive = sensitivity(op);
  if (sensitive && op.method !== "DELETE" && !/erasure/.test(sensitive))
    warnings.push(`Sensitive: ${sensitive}.`);
  return warnings;
}
