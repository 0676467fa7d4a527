import { z } from "zod";
import { XLSX_MIME } from "../api/response.js";
import { UserFacingError } from "../errors.js";
import { type Domain, defineTool, READ_ONLY, type ToolContext } from "../toolkit/definitions.js";
import {
  previewText,
  SHEET_PREVIEW_ROWS,
  saveExport,
  summariseWorkbook,
  workbookSummary,
} from "../toolkit/inrev.js";
import { quote } from "../writes/display.js";

const INREV_URI = "portfolio://reports/inrev";

async function inrevWorkbook(ctx: ToolContext): Promise<Buffer> {
  const result = await ctx.api.call("reports_inrev", {}, { signal: ctx.signal });
  return result.data as Buffer;
}

/**
 * Reporting. The tool answers with a readable preview of each sheet and a link to the workbook;
 * the bytes are read through the resource, not inlined in every call.
 */
export const reporting: Domain = {
  tools: [
    defineTool({
      kind: "run",
      name: "export_inrev_report",
      title: "Export the INREV report",
      description: `The entity's INREV reporting workbook (XLSX): a preview of each sheet and a link to the file (${INREV_URI}).`,
      family: "reporting",
      annotations: READ_ONLY,
      operations: ["reports_inrev"],
      input: z.strictObject({
        sheet: z
          .string()
          .max(100)
          .optional()
          .describe(`One sheet by name, previewed in up to ${SHEET_PREVIEW_ROWS} rows.`),
      }),
      output: workbookSummary,
      async run({ sheet }, ctx) {
        const bytes = await inrevWorkbook(ctx);
        const fileName = `inrev-report-${new Date().toISOString().slice(0, 10)}.xlsx`;
        const summary = await summariseWorkbook(bytes, fileName, sheet);
        if (sheet !== undefined && summary.sheets.length === 0) {
          const names = (await summariseWorkbook(bytes, fileName)).sheets.map((s) => s.name);
          throw new UserFacingError(
            `The INREV workbook has no sheet ${quote(sheet, 100)}; its sheets: ${names.join(", ")}.`,
          );
        }
        const savedPath = ctx.exportDir ? await saveExport(ctx.exportDir, fileName, bytes) : null;
        return {
          structured: { ...summary, saved_path: savedPath },
          blocks: [
            {
              type: "resource_link",
              uri: INREV_URI,
              name: fileName,
              title: "INREV report",
              mimeType: XLSX_MIME,
              size: bytes.length,
            },
            { type: "text", text: previewText(summary) },
          ],
        };
      },
    }),
  ],
  resources: [
    {
      name: "inrev-report",
      title: "INREV report",
      description: "The INREV reporting workbook (XLSX).",
      family: "reporting",
      uri: INREV_URI,
      tool: "export_inrev_report",
      mimeType: XLSX_MIME,
      read: async (ctx) => ({ blob: (await inrevWorkbook(ctx)).toString("base64") }),
    },
  ],
};
