import { invalid } from "../problem.js";

/**
 * The fields a partial update sent: absent ones are left as they are, null ones clear a
 * nullable field (spec part 2, conventions). An update that changes nothing is refused (422).
 */
export function sentFields<T extends object>(body: T): Partial<T> {
  const sent = Object.entries(body).filter(([, value]) => value !== undefined);
  if (sent.length === 0)
    throw invalid([
      { field: "body", rule: "min 1 field", message: "send at least one field to change" },
    ]);
  return Object.fromEntries(sent) as Partial<T>;
}
