import type { Operation } from "../api/catalogue.js";
import { type FileField, isFile } from "../api/multipart.js";
import { sensitivity } from "../api/offer.js";
import { record } from "../api/response.js";
import type { ToolContext } from "../toolkit/definitions.js";
import { metricAgainstThreshold } from "../toolkit/present.js";
import { madeLately } from "../toolkit/write-tools.js";
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
  const billable = op.contract?.billable ?? false;
  // The same billable call, made moments ago by this caller: said before the question.
  const lately = billable
    ? await madeLately(ctx, { operation: op.id, ...input }, (ago, answered) =>
        answered
          ? `This same billable call was made ${ago}; sending it again is charged again.`
          : `This same billable call was sent ${ago} and its answer is not known yet; sending it again may be charged twice.`,
      )
    : [];
  return {
    action: op.summary || op.id,
    target: await targetOf(op, input.path, body as Record<string, unknown>, ctx),
    fields: { ...shownFields(input.query), ...shownFields(body as Record<string, unknown>) },
    billable,
    warnings: [...warningsOf(op), ...lately],
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
  const found = await subjectOf(op, path, ctx);
  if (found) {
    const { read, subject, params } = found;
    const name = nameOf(subject);
    const details = await decisionFields(subject, ctx);
    const own = ids.filter((id) => params.some((w) => id.startsWith(`${w} `)));
    const others = ids.filter((id) => !params.some((w) => id.startsWith(`${w} `)));
    const label = name ? `${read.family} ${quote(name)}` : own.join(", ");
    return [`${label}${details.length > 0 ? ` (${details.join(", ")})` : ""}`, ...others].join(
      ", ",
    );
  }
  if (ids.length > 0) return ids.join(", ");
  const created = nameOf(body);
  return created ? `a new record in ${op.family}: ${quote(created)}` : `${op.family}`;
}

/**
 * The record a write touches, as the API shows it: through the read whose path the write's
 * extends (`/alerts/{alert_id}` for `/alerts/{alert_id}/acknowledge`); when the contract has no
 * such read (tasks), found by its id in the family's list that needs no parameter (the board).
 * Refused or gone: null, and the ids say what the write targets; the API decides.
 */
async function subjectOf(
  op: Operation,
  path: Record<string, unknown>,
  ctx: ToolContext,
): Promise<{ read: Operation; subject: Record<string, unknown>; params: string[] } | null> {
  const send = (read: Operation, input: object) =>
    ctx.api.send(read, input, { signal: ctx.signal, delegatedUser: ctx.session.delegatedUser });
  const read = subjectRead(op, ctx);
  try {
    if (read) {
      const params = placeholders(read.path);
      const input = { path: Object.fromEntries(params.map((name) => [name, path[name]])) };
      return { read, subject: record((await send(read, input)).data), params };
    }
    const [param] = placeholders(op.path);
    const id = param ? path[param] : undefined;
    if (typeof id !== "string") return null;
    for (const list of familyLists(op, ctx)) {
      const subject = findById((await send(list, {})).data, id);
      if (subject) return { read: list, subject, params: [param!] };
    }
    return null;
  } catch {
    return null;
  }
}

/** The family's offered list reads that take no parameter (the tasks board), at most two. */
function familyLists(op: Operation, ctx: ToolContext): Operation[] {
  return [...ctx.offer.offered.values()]
    .filter(
      (candidate) =>
        candidate.family === op.family &&
        candidate.kind === "read" &&
        candidate.method === "GET" &&
        placeholders(candidate.path).length === 0,
    )
    .slice(0, 2);
}

/** The object with this id anywhere in an answer (items, columns of a board). */
function findById(value: unknown, id: string): Record<string, unknown> | null {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findById(item, id);
      if (found) return found;
    }
    return null;
  }
  if (!value || typeof value !== "object") return null;
  const object = value as Record<string, unknown>;
  if (typeof object.id === "string" && object.id.toLowerCase() === id.toLowerCase()) return object;
  return findById(Object.values(object), id);
}

/**
 * The fields of the target a decision depends on, from the record read to name it (a rule, not a
 * table per operation): its kind and state (`*_type`, `status`, `severity`), its dates (`*_date`,
 * `due*`, `*_until`), a metric against its threshold, and the operation it belongs to, by name.
 */
async function decisionFields(subject: Record<string, unknown>, ctx: ToolContext) {
  const shown: string[] = [];
  for (const [key, value] of Object.entries(subject)) {
    if (value === null || value === undefined || value === "") continue;
    if (/(^|_)type$|^status$|^severity$/.test(key) && typeof value === "string")
      shown.push(`${key} ${quote(value, 60)}`);
    else if (/(^|_)date$|^due|_until$/.test(key) && typeof value === "string")
      shown.push(`${key} ${quote(value, 40)}`);
    else if (key === "metric") shown.push(...metricAgainstThreshold(value));
  }
  const operation = await operationName(subject.operation_id, ctx);
  if (operation) shown.push(`operation ${quote(operation)}`);
  return shown;
}

/** The name of the operation a record belongs to, when this caller may read it. */
async function operationName(id: unknown, ctx: ToolContext): Promise<string | null> {
  const read = ctx.api.routes.get("operation_get");
  if (typeof id !== "string" || !read || !ctx.offer.offered.has(read.id)) return null;
  try {
    const result = await ctx.api.send(
      read,
      { path: { operation_id: id } },
      { signal: ctx.signal, delegatedUser: ctx.session.delegatedUser },
    );
    return nameOf(record(result.data));
  } catch {
    return null; // the id is in the fields the API records; the name is a courtesy
  }
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

function describeFile(file: FileField): string {
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
