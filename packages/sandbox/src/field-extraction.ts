import { createHash } from "node:crypto";
import { folded } from "./french.js";
import type { ExtractedField } from "./models/extraction.js";
import type { FieldDefinition } from "./models/taxonomies.js";

/**
 * The sandbox's "AI" extraction: it reads `Label : value` lines of a document's text, the
 * label being a field definition's (GET /field-definitions), and types the value as the
 * definition says. Deterministic: the same text and job give the same fields and confidences.
 */
export function extractFields(
  text: string,
  definitions: readonly FieldDefinition[],
  jobId: string,
): ExtractedField[] {
  const lines = text.split("\n").map((line) => {
    const at = line.indexOf(" : ");
    return at === -1
      ? null
      : { label: folded(line.slice(0, at).trim()), value: line.slice(at + 3).trim(), line };
  });
  return definitions.map((definition) => {
    const label = folded(definition.label);
    const hit = lines.find((l) => l?.label === label) ?? null;
    const value = hit ? typed(definition, hit.value) : null;
    const found = value !== null;
    return {
      field_key: definition.key,
      label: definition.label,
      type: definition.type,
      unit: definition.unit,
      found,
      value,
      excerpt: found ? (hit?.line ?? null) : null,
      confidence: found ? confidence(definition, jobId) : 0,
    };
  });
}

const BASE_CONFIDENCE: Record<FieldDefinition["type"], number> = {
  string: 0.97,
  integer: 0.95,
  decimal: 0.92,
  date: 0.94,
  boolean: 0.9,
  enum: 0.88,
};

function confidence(definition: FieldDefinition, jobId: string): number {
  const jitter = createHash("sha256").update(`${jobId}:${definition.key}`).digest().readUInt8(0);
  return Math.round((BASE_CONFIDENCE[definition.type] - (jitter % 8) / 100) * 100) / 100;
}

/** The value as the definition types it, or null when the text does not say it that way. */
function typed(definition: FieldDefinition, raw: string): string | number | boolean | null {
  switch (definition.type) {
    case "integer": {
      const match = /-?\d[\d\s\u202f]*/.exec(raw);
      return match ? Number(match[0].replace(/[\s\u202f]/g, "")) : null;
    }
    case "decimal": {
      const match = /-?\d[\d\s\u202f]*(?:,\d+)?/.exec(raw);
      return match ? match[0].replace(/[\s\u202f]/g, "").replace(",", ".") : null;
    }
    case "date": {
      const match = /(\d{2})\/(\d{2})\/(\d{4})/.exec(raw);
      return match ? `${match[3]}-${match[2]}-${match[1]}` : null;
    }
    case "boolean": {
      const word = folded(raw);
      return word.startsWith("oui") ? true : word.startsWith("non") ? false : null;
    }
    case "enum": {
      const wanted = alphanumeric(raw);
      return definition.enum_values?.find((code) => alphanumeric(code) === wanted) ?? null;
    }
    default:
      return raw === "" ? null : raw;
  }
}

function alphanumeric(text: string): string {
  return folded(text).replace(/[^a-z0-9]/g, "");
}

/**
 * The definitions a job looks for by default: the available ones that apply to what the
 * document is attached to (an operation's fields for a report, an operator's for its accounts).
 */
export function defaultDefinitions(
  definitions: readonly FieldDefinition[],
  targetTypes: readonly string[],
): FieldDefinition[] {
  const available = definitions.filter((d) => d.availability === "available");
  const applying = available.filter((d) => targetTypes.includes(d.applies_to));
  return applying.length > 0 ? applying : available;
}
