import type { z } from "zod";

/**
 * One refused value, as both sides of the wire report it: where it is, the rule it breaks, a
 * sentence. Shared by the sandbox and the client because it only formats zod's findings.
 */
export interface FieldError {
  /** Where the bad value is: `limit`, `layout[3]`, `header Idempotency-Key`. */
  field: string;
  /** The rule it breaks, short and stable: `max 200`, `pattern ^[!-~]+$`, `required`. */
  rule: string;
  message: string;
}

/** Turns one zod issue into the field and rule a client can act on. */
export function describeIssue(issue: z.core.$ZodIssue, prefix = ""): FieldError {
  const field = formatPath(prefix, issue.path);
  switch (issue.code) {
    case "too_big": {
      const rule = sizeRule("max", issue.origin, issue.maximum);
      return { field, rule, message: sizeMessage("at most", issue.origin, issue.maximum) };
    }
    case "too_small": {
      const rule = sizeRule("min", issue.origin, issue.minimum);
      return { field, rule, message: sizeMessage("at least", issue.origin, issue.minimum) };
    }
    case "invalid_format": {
      const custom = !issue.message.startsWith("Invalid");
      if (issue.format === "regex" && issue.pattern) {
        const rule = `pattern ${issue.pattern.replace(/^\/|\/[a-z]*$/g, "")}`;
        return { field, rule, message: custom ? issue.message : `must match ${rule}` };
      }
      const rule = `format ${issue.format}`;
      return { field, rule, message: custom ? issue.message : `must be a valid ${issue.format}` };
    }
    case "invalid_value": {
      const rule = `one of ${issue.values.map(String).join(", ")}`;
      return { field, rule, message: `must be ${rule}` };
    }
    case "unrecognized_keys":
      return {
        field: formatPath(prefix, [...issue.path, issue.keys[0] ?? ""]),
        rule: "unknown field",
        message:
          issue.keys.length > 1
            ? `are not known fields (${issue.keys.join(", ")})`
            : "is not a known field",
      };
    case "invalid_type":
      if (issue.message.endsWith("received undefined")) {
        return { field, rule: "required", message: "is required" };
      }
      return {
        field,
        rule: `type ${issue.expected}`,
        message: `must be ${article(issue.expected)}`,
      };
    case "invalid_union":
      // A union given its own error message ("is required") says it better than we can.
      return issue.message.startsWith("Invalid")
        ? { field, rule: "one of the accepted shapes", message: "has none of the accepted shapes" }
        : { field, rule: issue.message, message: issue.message };
    case "custom":
      // Our own refinements: their message is written as the rule in words ("must not be blank").
      return { field, rule: issue.message, message: issue.message };
    default:
      return { field, rule: issue.code, message: issue.message };
  }
}

function sizeRule(bound: "min" | "max", origin: string, value: number | bigint): string {
  if (origin === "string") return `${bound} length ${value}`;
  if (origin === "array" || origin === "set") return `${bound} ${value} items`;
  return `${bound} ${value}`;
}

function sizeMessage(bound: string, origin: string, value: number | bigint): string {
  if (origin === "string") {
    if (bound === "at least" && Number(value) === 1) return "must not be empty";
    return `must have ${bound} ${plural(value, "character")}`;
  }
  if (origin === "array" || origin === "set") {
    if (bound === "at least" && Number(value) === 1) return "must have at least one item";
    return `must have ${bound} ${plural(value, "item")}`;
  }
  return `must be ${bound} ${value}`;
}

const plural = (n: number | bigint, noun: string) => `${n} ${noun}${Number(n) === 1 ? "" : "s"}`;

/** "must be a string", "must be an integer", "must be an array": a type named in words. */
function article(expected: string): string {
  const noun = expected === "int" ? "integer" : expected;
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

/** `filters.statut`, `columns[2]`, `sort[0].sort_by`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return formatPath("", path);
}

function formatPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "body";
}
