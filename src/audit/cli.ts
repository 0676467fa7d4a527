import { parseFlags, UsageError } from "../cli-args.js";
import { CSV_COLUMNS, csvRow, queryRecords } from "./query.js";
import { describeReports, verifyChains } from "./verify.js";

const USAGE = `Usage:
  portfolio-mcp audit verify FILE...     check the chain: exit 0 when it holds, else name the first record that breaks it
  portfolio-mcp audit query [options] FILE...
      --since TIME --until TIME           ISO 8601 times (or dates)
      --principal ID                      a principal or its recorded identity
      --tool NAME                         a tool, resource URI or prompt
      --operation ID                      an API operation id, or an id it touched (operation_id, alert_id, ...)
      --outcome OUTCOME --event EVENT     e.g. --event decision --outcome confirmed
      --format json|csv                   JSON lines (default) or CSV with a header`;

/** `portfolio-mcp audit …`: reads audit files, writes to stdout, changes nothing. */
export async function runAuditCommand(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === "verify") {
    const files = rest.filter((a) => !a.startsWith("-"));
    if (files.length === 0 || files.length !== rest.length)
      throw new UsageError(`give the audit files to check\n${USAGE}`);
    const reports = await verifyChains(files);
    process.stdout.write(`${describeReports(reports)}\n`);
    return reports.some((r) => r.broken) ? 1 : 0;
  }
  if (command === "query") {
    const { values, positionals } = parseFlags({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: {
        since: { type: "string" },
        until: { type: "string" },
        principal: { type: "string" },
        tool: { type: "string" },
        operation: { type: "string" },
        outcome: { type: "string" },
        event: { type: "string" },
        format: { type: "string", default: "json" },
      },
    });
    if (positionals.length === 0) throw new UsageError(`give the audit files to read\n${USAGE}`);
    if (values.format !== "json" && values.format !== "csv")
      throw new UsageError("--format must be json or csv");
    for (const name of ["since", "until"] as const)
      if (values[name] !== undefined && Number.isNaN(Date.parse(values[name])))
        throw new UsageError(`--${name} must be an ISO 8601 time or date, got ${values[name]}`);
    const csv = values.format === "csv";
    if (csv) await write(`${CSV_COLUMNS.join(",")}\n`);
    for await (const record of queryRecords(positionals, values))
      await write(`${csv ? csvRow(record) : JSON.stringify(record)}\n`);
    return 0;
  }
  throw new UsageError(`audit takes verify or query\n${USAGE}`);
}

/** stdout, waiting when a slow reader (a pipe) has not drained: memory stays bounded. */
function write(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once("drain", resolve).once("error", reject);
  });
}
