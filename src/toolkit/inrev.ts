import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { XLSX_MIME } from "../api/response.js";

export const PREVIEW_ROWS = 8;
export const PREVIEW_COLUMNS = 8;
/** Rows a preview of one sheet asked for by name may show. */
export const SHEET_PREVIEW_ROWS = 50;

export const workbookSummary = z.object({
  file_name: z.string(),
  mime_type: z.string(),
  size_bytes: z.int(),
  saved_path: z
    .string()
    .nullable()
    .describe("Where the file was also saved (PORTFOLIO_EXPORT_DIR), or null."),
  sheets: z.array(
    z.object({
      name: z.string(),
      rows: z.int(),
      columns: z.int(),
      preview: z
        .array(z.array(z.string()))
        .describe(
          `First ${PREVIEW_ROWS} rows (${SHEET_PREVIEW_ROWS} for a sheet asked for), first ${PREVIEW_COLUMNS} columns, as text.`,
        ),
    }),
  ),
});

export type WorkbookSummary = z.output<typeof workbookSummary>;

/**
 * Reads a workbook with a real XLSX parser (read-excel-file) and previews each sheet (or the
 * one named, in more rows).
 */
export async function summariseWorkbook(
  bytes: Buffer,
  fileName: string,
  only?: string,
): Promise<Omit<WorkbookSummary, "saved_path">> {
  const { default: readXlsxFile } = await import("read-excel-file/node"); // loaded on first export
  const sheets = await readXlsxFile(bytes, { trim: false });
  return {
    file_name: fileName,
    mime_type: XLSX_MIME,
    size_bytes: bytes.length,
    sheets: sheets
      .filter(({ sheet }) => only === undefined || sheet === only)
      .map(({ sheet, data }) => ({
        name: sheet,
        rows: data.length,
        columns: Math.max(0, ...data.map((row) => row.length)),
        preview: data
          .slice(0, only === undefined ? PREVIEW_ROWS : SHEET_PREVIEW_ROWS)
          .map((row) => row.slice(0, PREVIEW_COLUMNS).map((value) => cellText(value))),
      })),
  };
}

/**
 * A cell as text: dates as ISO dates (with the time when there is one), empty cells as "".
 * `unknown`: the library's types declare a date cell as the Date constructor, not a Date.
 */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Date) {
    const iso = value.toISOString();
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
  }
  return String(value);
}

/** Saves the workbook under the export directory, owner-only, and gives its path. */
export async function saveExport(dir: string, fileName: string, bytes: Buffer): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, fileName);
  await writeFile(path, bytes, { mode: 0o600 });
  return path;
}

/** A readable table of each sheet's first rows, for the text block. */
export function previewText(summary: Omit<WorkbookSummary, "saved_path">): string {
  return summary.sheets
    .map((s) =>
      [
        `## ${s.name} (${s.rows} rows × ${s.columns} columns)`,
        ...s.preview.map((row) => `| ${row.join(" | ")} |`),
      ].join("\n"),
    )
    .join("\n\n");
}
