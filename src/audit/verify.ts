import { firstLine, linesOf } from "./lines.js";
import { type AuditRecord, GENESIS, hashOfLine } from "./record.js";

/** Where a chain does not hold, in words a reviewer can act on. */
export interface ChainBreak {
  file: string;
  line: number;
  seq: number | null;
  why: string;
}

export interface ChainReport {
  replica: string;
  files: string[];
  records: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** Cut-short last lines a crash left, each resumed (or still at the end). */
  truncations: Array<{ file: string; line: number; resumed: boolean }>;
  /** The chain begins in a file not given (its first record names an earlier one). */
  startsAfter: string | null;
  broken: ChainBreak | null;
}

/**
 * Checks the chains of the given files (`portfolio-mcp audit verify`): each replica's files in
 * the order of their records, every record naming the one before by its hash and taking the
 * next place. The first record that does not is named with why: changed (its successor names
 * another hash), removed (a place is missing), reordered (a place comes back). Streams: the
 * files are read line by line.
 */
export async function verifyChains(paths: string[]): Promise<ChainReport[]> {
  const groups = new Map<string, Array<{ path: string; seq: number }>>();
  for (const path of paths) {
    const head = parse((await firstLine(path)) ?? "");
    const replica = head?.replica ?? `(unreadable: ${path})`;
    const group = groups.get(replica) ?? [];
    group.push({ path, seq: head?.seq ?? Number.MAX_SAFE_INTEGER });
    groups.set(replica, group);
  }
  const reports: ChainReport[] = [];
  for (const [replica, files] of groups) {
    files.sort((a, b) => a.seq - b.seq);
    reports.push(
      await verifyChain(
        replica,
        files.map((f) => f.path),
      ),
    );
  }
  return reports;
}

async function verifyChain(replica: string, files: string[]): Promise<ChainReport> {
  const report: ChainReport = {
    replica,
    files,
    records: 0,
    firstSeq: null,
    lastSeq: null,
    truncations: [],
    startsAfter: null,
    broken: null,
  };
  let last: { hash: string; seq: number } | null = null;
  let cut: { file: string; line: number } | null = null;
  // A place found missing: removed, unless the next record is the missing one (reordered).
  let gap: { file: string; line: number; seq: number; missing: number } | null = null;
  const fail = (file: string, line: number, seq: number | null, why: string) => {
    report.broken = { file, line, seq, why };
    return report;
  };
  for (const file of files) {
    for await (const { text, number } of linesOf(file)) {
      const record = parse(text);
      if (!record) {
        if (cut) return fail(cut.file, cut.line, null, "the record is not readable");
        cut = { file, line: number };
        continue;
      }
      // After a line a crash cut short, the next start says so: the chain goes on from the last
      // complete record. Anywhere else, an unreadable line breaks the chain.
      if (cut && record.event === "chain-resumed") {
        report.truncations.push({ ...cut, resumed: true });
        cut = null;
      }
      if (cut) return fail(cut.file, cut.line, null, "the record is not readable");
      const where = `record ${record.seq} (${file}:${number})`;
      if (gap) return fail(gap.file, gap.line, gap.seq, gapReason(gap, record.seq === gap.missing));
      if (last === null) {
        report.firstSeq = record.seq;
        if (record.prev !== GENESIS) report.startsAfter = record.prev;
      } else if (record.seq > last.seq + 1) {
        gap = { file, line: number, seq: record.seq, missing: last.seq + 1 };
        continue;
      } else if (record.seq <= last.seq) {
        return fail(
          file,
          number,
          record.seq,
          `${where} comes after record ${last.seq}: records were reordered or repeated`,
        );
      } else if (record.prev !== last.hash) {
        return fail(
          file,
          number,
          record.seq,
          `record ${last.seq} was changed: ${where} names another hash`,
        );
      }
      last = { hash: hashOfLine(text), seq: record.seq };
      report.records++;
      report.lastSeq = record.seq;
    }
  }
  if (gap) return fail(gap.file, gap.line, gap.seq, gapReason(gap, false));
  if (cut) report.truncations.push({ ...cut, resumed: false });
  return report;
}

/** A place found missing: reordered when the next record is the missing one, else removed. */
function gapReason(
  gap: { file: string; line: number; seq: number; missing: number },
  missingComesNext: boolean,
): string {
  const at = `record ${gap.seq} (${gap.file}:${gap.line})`;
  return missingComesNext
    ? `${at} comes before record ${gap.missing}: records were reordered`
    : `${at}: records ${gap.missing} to ${gap.seq - 1} were removed`;
}

function parse(text: string): AuditRecord | null {
  try {
    const value = JSON.parse(text) as AuditRecord;
    return value &&
      typeof value === "object" &&
      typeof value.seq === "number" &&
      typeof value.prev === "string"
      ? value
      : null;
  } catch {
    return null;
  }
}

/** The report as a person reads it: one line per chain, then the break, if any. */
export function describeReports(reports: ChainReport[]): string {
  return reports
    .map((r) => {
      const span = r.firstSeq === null ? "no records" : `records ${r.firstSeq} to ${r.lastSeq}`;
      const lines = [
        `${r.broken ? "BROKEN" : "holds"}: replica ${r.replica}, ${r.records} record(s), ${span}, in ${r.files.length} file(s)`,
      ];
      if (r.startsAfter)
        lines.push(
          `  it continues a chain begun in a file not given (its first record names ${r.startsAfter.slice(0, 16)}…)`,
        );
      for (const t of r.truncations)
        lines.push(
          `  ${t.file}:${t.line}: a line cut short by a crash while it was written${t.resumed ? "; the next start recorded it and the chain continues" : " (the last line: the next start will record it)"}`,
        );
      if (r.broken) lines.push(`  ${r.broken.file}:${r.broken.line}: ${r.broken.why}`);
      return lines.join("\n");
    })
    .join("\n");
}
