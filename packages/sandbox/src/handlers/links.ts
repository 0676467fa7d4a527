import { type FieldError, invalid } from "../problem.js";
import type { SandboxState } from "../state.js";

/** The records a resource may link to by id. */
export type LinkField = "operation_id" | "operateur_id" | "fond_id" | "spv_id";

/** 422 `reference_not_found` for each link that names no record of the entity. */
export function checkLinks(state: SandboxState, body: Partial<Record<LinkField, unknown>>): void {
  const known: Record<LinkField, (id: string) => boolean> = {
    operation_id: (id) => state.data.operations.some((o) => o.id === id),
    operateur_id: (id) => state.data.operators.some((o) => o.id === id),
    fond_id: (id) => state.data.funds.some((f) => f.id === id),
    spv_id: (id) => state.data.spvs.some((s) => s.id === id),
  };
  const errors: FieldError[] = [];
  for (const field of Object.keys(known) as LinkField[]) {
    const value = body[field];
    if (typeof value === "string" && !known[field](value.toLowerCase()))
      errors.push({ field, rule: "existing record", message: `names no record of this entity` });
  }
  if (errors.length > 0) throw invalid(errors, "reference_not_found");
}

/** A link as stored: UUIDs compare case-insensitively (absent stays absent, null stays null). */
export function lowerId<T extends string | null | undefined>(id: T): T {
  return (typeof id === "string" ? id.toLowerCase() : id) as T;
}
