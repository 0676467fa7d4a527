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
 * Reads a workbook with a real XLSX parser and previews each sheet (or the one named, in more
 * rows).
 */
export async function summariseWorkbook(
  bytes: Buffer,
  fileName: string,
  only?: string,
): Promise<Omit<WorkbookSummary, "saved_path">> {
  const { default: ExcelJS } = await import("exceljs"); // loaded on first export: it is large
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  return {
    file_name: fileName,
    mime_type: XLSX_MIME,
    size_bytes: bytes.length,
    sheets: workbook.worksheets
      .filter((sheet) => only === undefined || sheet.name === only)
      .map((sheet) => {
        const preview: string[][] = [];
        const rows = only === undefined ? PREVIEW_ROWS : SHEET_PREVIEW_ROWS;
        for (let r = 1; r <= Math.min(sheet.rowCount, rows); r++) {
          const row = sheet.getRow(r);
          const cells: string[] = [];
          for (let c = 1; c <= Math.min(sheet.columnCount, PREVIEW_COLUMNS); c++)
            cells.push(row.getCell(c).text ?? "");
          preview.push(cells);
        }
        return { name: sheet.name, rows: sheet.rowCount, columns: sheet.columnCount, preview };
      }),
  };
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
