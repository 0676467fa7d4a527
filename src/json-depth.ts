import type { FieldError } from "@portfolio-mcp/field-errors";

/** Deeper than any argument or body this API takes; far below what recursion can survive. */
export const MAX_JSON_DEPTH = 16;

/**
 * The first place where a JSON value nests deeper than `max`, as a field refusal, or null.
 * Iterative, so a hostile value 100,000 levels deep costs a loop, not the stack.
 */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): FieldError | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [
    { value, path: "", depth: 0 },
  ];
  while (stack.length > 0) {
    const { value: node, path, depth } = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth >= max) {
      return {
        field: path || "arguments",
        rule: `max depth ${max}`,
        message: `must not nest objects or arrays more than ${max} levels deep`,
      };
    }
    const entries = Array.isArray(node)
      ? node.map((v, i) => [`[${i}]`, v] as const)
      : Object.entries(node).map(([k, v]) => [path ? `.${k}` : k, v] as const);
    for (const [step, child] of entries)
      stack.push({ value: child, path: `${path}${step}`, depth: depth + 1 });
  }
  return null;
}
