import type { OperationMeta } from "../routing.js";
import { type JsonSchema, SchemaCollector } from "./json-schema.js";
import { inContractOrder, PATHS_SHOWN_BY_SPEC } from "./table.js";

/** The served operations as a Markdown table (docs/sandbox.md's, written by `npm run generate`), columns aligned as a formatter would leave them. */
export function routeTable(operations: readonly OperationMeta[]): string {
  const rows = inContractOrder(operations).map((op) => [
    op.id,
    op.family,
    `${op.method} ${op.path}${PATHS_SHOWN_BY_SPEC.has(op.id) ? "" : " _chosen_"}${queryOf(op)}`,
    op.scope ?? "none (no bearer)",
    op.kind === "exchange"
      ? "token exchange"
      : op.capability
        ? `${op.kind}, delegated (\`${op.capability}\`)`
        : op.kind,
    op.summary,
  ]);
  const header = ["id", "family", "method and path", "scope", "kind", "summary"];
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** The query parameters, with the bounds and default of each page size: ` (limit 1-200, default 20; offset)`. */
function queryOf(op: OperationMeta): string {
  if (!op.query) return "";
  const properties = (new SchemaCollector().convert(op.query, "input").properties ?? {}) as Record<
    string,
    JsonSchema
  >;
  const parts = Object.entries(properties).map(([name, schema]) =>
    schema.type === "integer" && typeof schema.maximum === "number" && schema.maximum < 1_000_000
      ? `${name} ${schema.minimum}-${schema.maximum}, default ${schema.default}`
      : name,
  );
  return parts.length > 0 ? ` (${parts.join("; ")})` : "";
}
