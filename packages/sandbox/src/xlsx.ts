/** One sheet of a workbook: a header row, then rows of cells. */
export interface SheetTable {
  name: string;
  columns: ReadonlyArray<{ header: string; width?: number; numFmt?: string }>;
  rows: ReadonlyArray<ReadonlyArray<string | number | Date | null>>;
  /** Keep the header row in view while scrolling (the default). */
  freezeHeader?: boolean;
}

/**
 * A real XLSX workbook of plain tables (write-excel-file): the seeded spreadsheets among the
 * documents, the reporting templates' exports and the INREV report. The header row is bold; a
 * column's number format applies to its numbers and dates. The writer is loaded on first use
 * only: most sandboxes never produce a workbook.
 */
export async function tableWorkbook(sheets: readonly SheetTable[]): Promise<Buffer> {
  const { default: writeXlsxFile } = await import("write-excel-file/node");
  const workbook = sheets.map((table) => ({
    sheet: table.name.slice(0, 31),
    columns: table.columns.map((column) => ({
      width: column.width ?? Math.min(Math.max(column.header.length + 2, 12), 48),
    })),
    stickyRowsCount: table.freezeHeader === false ? 0 : 1,
    data: [
      table.columns.map((column) => ({ value: column.header, fontWeight: "bold" as const })),
      ...table.rows.map((row) => row.map((value, i) => cell(value, table.columns[i]?.numFmt))),
    ],
  }));
  return writeXlsxFile(workbook).toBuffer();
}

function cell(value: string | number | Date | null, format: string | undefined) {
  if (value instanceof Date) return { value, type: Date, format: format ?? "yyyy-mm-dd" };
  if (typeof value === "number" && format) return { value, format };
  return value;
}
