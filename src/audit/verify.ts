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
  const walk = new ChainWalk(replica, files);
  for (const file of files)
    for await (const { text, number } of linesOf(file))
      if (!walk.take(file, number, text)) return walk.report;
  walk.finish();
  return walk.report;
}

type Gap = { file: string; line: number; seq: number; missing: number };

/** One replica's chain, line by line: what holds so far, and the first break. */
class ChainWalk {
  readonly report: ChainReport;
  private last: { hash: string; seq: number } | null = null;
  /** A line a crash may have cut short: fine if the next start says so. */
  private cut: { file: string; line: number } | null = null;
  /** A place found missing: removed, unless the next record is the missing one (reordered). */
  private gap: Gap | null = null;

  constructor(replica: string, files: string[]) {
    this.report = {
      replica,
      files,
      records: 0,
      firstSeq: null,
      lastSeq: null,
      truncations: [],
      startsAfter: null,
      broken: null,
    };
  }

  /** Takes one line; false once the chain is broken (the report says where and why). */
  take(file: string, number: number, text: string): boolean {
    const record = parse(text);
    if (!record) {
      if (this.cut)
        return this.fail(this.cut.file, this.cut.line, null, "the record is not readable");
      this.cut = { file, line: number };
      return true;
    }
    // After a line a crash cut short, the next start says so: the chain goes on from the last
    // complete record. Anywhere else, an unreadable line breaks the chain.
    if (this.cut && record.event === "chain-resumed") {
      this.report.truncations.push({ ...this.cut, resumed: true });
      this.cut = null;
    }
    if (this.cut)
      return this.fail(this.cut.file, this.cut.line, null, "the record is not readable");
    const gap = this.gap;
    if (gap)
      return this.fail(gap.file, gap.line, gap.seq, gapReason(gap, record.seq === gap.missing));
    return this.place(record, file, number, text);
  }

  /** The end of the last file: a gap left open was a removal; a cut last line is reported. */
  finish(): void {
    const gap = this.gap;
    if (gap) this.fail(gap.file, gap.line, gap.seq, gapReason(gap, false));
    else if (this.cut) this.report.truncations.push({ ...this.cut, resumed: false });
  }

  /** A readable record in its place: the next one, naming the hash of the one before. */
  private place(record: AuditRecord, file: string, number: number, text: string): boolean {
    const last = this.last;
    const where = `record ${record.seq} (${file}:${number})`;
    if (last === null) {
      this.report.firstSeq = record.seq;
      if (record.prev !== GENESIS) this.report.startsAfter = record.prev;
    } else if (record.seq > last.seq + 1) {
      this.gap = { file, line: number, seq: record.seq, missing: last.seq + 1 };
      return true;
    } else if (record.seq <= last.seq) {
      return this.fail(
        file,
        number,
        record.seq,
        `${where} comes after record ${last.seq}: records were reordered or repeated`,
      );
    } else if (record.prev !== last.hash) {
      return this.fail(
        file,
        number,
        record.seq,
        `record ${last.seq} was changed: ${where} names another hash`,
      );
    }
    this.last = { hash: hashOfLine(text), seq: record.seq };
    this.report.records++;
    this.report.lastSeq = record.seq;
    return true;
  }

  private fail(file: string, line: number, seq: number | null, why: string): false {
    this.report.broken = { file, line, seq, why };
    return false;
  }
}

/** A place found missing: reordered when the next record is the missing one, else removed. */
function gapReason(gap: Gap, missingComesNext: boolean): string {
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
