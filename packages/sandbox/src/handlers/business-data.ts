import { DECIMAL_PATTERN, type Json, type JsonObject } from "../models/common.js";
import type { FieldDefinition } from "../models/taxonomies.js";
import { type FieldError, invalid, Problem } from "../problem.js";
import type { SandboxState } from "../state.js";

/**
 * The open `data` object of operations and operators, checked against the field definitions
 * (spec part 2: keys, types and units come from `GET /field-definitions`), and the taxonomy
 * codes of coded fields (spec part 2: codes come from `GET /taxonomies`).
 */

/** The financial snapshot's keys: they belong in `kpi_snapshot`, never in `data` (spec part 2). */
export const KPI_KEYS = [
  "crd_total",
  "crd_senior",
  "crd_mezzanine",
  "valeur_venale",
  "noi",
  "service_dette",
  "ltv",
  "dscr",
] as const;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function typeError(definition: FieldDefinition, value: Json): string | null {
  switch (definition.type) {
    case "string":
      return typeof value === "string" ? null : "must be a string";
    case "integer":
      return Number.isInteger(value) ? null : "must be an integer";
    case "decimal":
      return typeof value === "number" ||
        (typeof value === "string" && value !== "" && DECIMAL_PATTERN.test(value))
        ? null
        : "must be a decimal, as a number or a string";
    case "date":
      return typeof value === "string" && DATE.test(value) && !Number.isNaN(Date.parse(value))
        ? null
        : "must be a date (YYYY-MM-DD)";
    case "boolean":
      return typeof value === "boolean" ? null : "must be true or false";
    case "enum":
      return typeof value === "string" && (definition.enum_values ?? []).includes(value)
        ? null
        : `must be one of ${(definition.enum_values ?? []).join(", ")}`;
  }
}

/**
 * Refuses, with 422, what a write may not put in `data`: KPI keys (`kpi_key_in_data`), keys no
 * field definition of the resource names (`unknown_business_field`), fields the entity marks
 * unavailable (`business_field_unavailable`), values of the wrong type (`validation_failed`).
 * A null value is accepted: it removes the key.
 */
export function checkBusinessData(
  state: SandboxState,
  appliesTo: FieldDefinition["applies_to"],
  data: JsonObject,
): void {
  const kpi = Object.keys(data).filter((key) => (KPI_KEYS as readonly string[]).includes(key));
  if (appliesTo === "operation" && kpi.length > 0) {
    throw invalid(
      kpi.map((key) => ({
        field: `data.${key}`,
        rule: "belongs in kpi_snapshot",
        message: "is a KPI: send it inside kpi_snapshot, not as a key of data",
      })),
      "kpi_key_in_data",
    );
  }
  const definitions = new Map(
    state.data.fieldDefinitions.filter((d) => d.applies_to === appliesTo).map((d) => [d.key, d]),
  );
  const unknown: FieldError[] = [];
  const unavailable: FieldError[] = [];
  const wrong: FieldError[] = [];
  for (const [key, value] of Object.entries(data)) {
    const field = `data.${key}`;
    const definition = definitions.get(key);
    if (!definition) {
      unknown.push({
        field,
        rule: "defined field",
        message: `is not a field definition of ${appliesTo === "operation" ? "operations" : "operators"} (GET /field-definitions)`,
      });
    } else if (definition.availability === "unavailable") {
      unavailable.push({
        field,
        rule: "available field",
        message: "is unavailable for this entity",
      });
    } else if (value !== null) {
      const error = typeError(definition, value);
      if (error) wrong.push({ field, rule: `type ${definition.type}`, message: error });
    }
  }
  if (unknown.length > 0) throw invalid(unknown, "unknown_business_field");
  if (unavailable.length > 0) throw invalid(unavailable, "business_field_unavailable");
  if (wrong.length > 0) throw invalid(wrong);
}

/** A coded field and the taxonomy dimension its codes come from. */
export interface CodedValue {
  field: string;
  dimension: string;
  value: string | readonly string[] | null | undefined;
}

/** 422 `unknown_taxonomy_code` for each value that is not a code of its dimension. */
export function checkCodes(state: SandboxState, values: readonly CodedValue[]): void {
  const errors: FieldError[] = [];
  for (const { field, dimension, value } of values) {
    if (value === null || value === undefined) continue;
    const codes = state.data.taxonomies
      .find((d) => d.dimension === dimension)
      ?.values.map((v) => v.code);
    if (!codes) throw new Problem(500, `No taxonomy dimension ${dimension}.`);
    const list = typeof value === "string" ? [value] : value;
    list.forEach((code, i) => {
      if (codes.includes(code)) return;
      errors.push({
        field: typeof value === "string" ? field : `${field}[${i}]`,
        rule: `${dimension} code`,
        message: `must be a code of the ${dimension} taxonomy (${codes.join(", ")})`,
      });
    });
  }
  if (errors.length > 0) throw invalid(errors, "unknown_taxonomy_code");
}
