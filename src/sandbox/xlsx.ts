/** One sheet of a workbook: a header row, then rows of cells. */
export interface SheetTable {
  name: string;
  columns: ReadonlyArray<{ header: string; width?: number; numFmt?: string }>;
  rows: ReadonlyArray<ReadonlyArray<string | number | Date | null>>;
}

/**
 * A real XLSX workbook (exceljs) of plain tables: the seeded spreadsheets among the documents
 * and the reporting templates' exports. exceljs is loaded on first use only: it is large, and
 * most sandboxes never produce a workbook.
 */
export async function tableWorkbook(
  sheets: readonly SheetTable[],
  meta: { created: string; title: string },
): Promise<Buffer> {
  const { default: ExcelJS } = await import("exceljs");
  const workbook = new ExcelJS.Workbook();
  workbook.creator = "Partner API sandbox";
  workbook.title = meta.title;
  workbook.created = new Date(meta.created);
  workbook.modified = new Date(meta.created);
  for (const table of sheets) {
    const sheet = workbook.addWorksheet(table.name.slice(0, 31));
    sheet.columns = table.columns.map((column) => ({
      header: column.header,
      width: column.width ?? Math.min(Math.max(column.header.length + 2, 12), 48),
      ...(column.numFmt ? { style: { numFmt: column.numFmt } } : {}),
    }));
    for (const row of table.rows) sheet.addRow([...row]);
    sheet.getRow(1).font = { bold: true };
    sheet.views = [{ state: "frozen", ySplit: 1 }];
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
