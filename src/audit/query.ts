import { linesOf } from "./lines.js";
import type { AuditRecord } from "./record.js";

/** What `portfolio-mcp audit query` filters on; every one given must hold. */
export interface AuditFilter {
  since?: string;
  until?: string;
  /** The principal or its identity (the hash or e-mail recorded). */
  principal?: string;
  /** The tool, resource URI or prompt. */
  tool?: string;
  /** An API operation id it caused or wrote, or an id it touched (operation_id, alert_id, …). */
  operation?: string;
  outcome?: string;
  event?: string;
}

/** The records of the files that match, in file order, one at a time. */
export async function* queryRecords(
  paths: string[],
  filter: AuditFilter,
): AsyncGenerator<AuditRecord> {
  const since = filter.since ? Date.parse(filter.since) : Number.NEGATIVE_INFINITY;
  const until = filter.until ? Date.parse(filter.until) : Number.POSITIVE_INFINITY;
  for (const path of paths) {
    for await (const { text } of linesOf(path)) {
      let record: AuditRecord;
      try {
        record = JSON.parse(text) as AuditRecord;
      } catch {
        continue; // `audit verify` says where a line is unreadable; a query skips it
      }
      const at = Date.parse(record.time);
      if (at < since || at > until) continue;
      if (filter.event && record.event !== filter.event) continue;
      if (filter.outcome && record.outcome !== filter.outcome) continue;
      if (filter.tool && record.target !== filter.tool) continue;
      if (
        filter.principal &&
        record.principal !== filter.principal &&
        record.identity !== filter.principal
      )
        continue;
      if (filter.operation && !touches(record, filter.operation)) continue;
      yield record;
    }
  }
}

function touches(record: AuditRecord, id: string): boolean {
  return (
    record.target === id ||
    (record.operations ?? []).some((o) => o.id === id) ||
    Object.values(record.subject ?? {}).includes(id)
  );
}

export const CSV_COLUMNS = [
  "time",
  "replica",
  "seq",
  "event",
  "principal",
  "identity",
  "delegated_user",
  "session",
  "era",
  "method",
  "target",
  "subject",
  "operations",
  "intent",
  "channel",
  "idempotency_key",
  "outcome",
  "reason",
  "duration_ms",
  "trace_id",
  "args_digest",
] as const;

/** One CSV row (RFC 4180 quoting); nested values as compact JSON. */
export function csvRow(record: AuditRecord): string {
  return CSV_COLUMNS.map((column) => {
    const value = (record as unknown as Record<string, unknown>)[column];
    if (value === undefined || value === null) return "";
    const text = typeof value === "object" ? JSON.stringify(value) : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }).join(",");
}
