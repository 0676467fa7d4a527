import { z } from "zod";
import { tooDeep } from "../json-depth.js";

/**
 * A free-form JSON value taken as text. Strict converters (OpenAI's strict function calling,
 * Gemini's `parameters`) refuse an open object or drop the tool, so where the API gives no
 * shape (a dashboard's layout, a generic call's body) the model writes the JSON in a string and
 * the server parses it; the validated value is the parsed one. A client that sends the object
 * itself is served too (src/mcp/schema.ts turns it back into text before validation).
 */
const JSON_TEXT = new WeakSet<z.ZodType>();

export function jsonText<T extends z.ZodType>(inner: T, description: string, maxBytes = 16_384) {
  const schema = z
    .string()
    .transform((text, ctx): unknown => {
      if (Buffer.byteLength(text) > maxBytes) {
        ctx.addIssue({ code: "custom", message: `must take at most ${maxBytes} bytes of JSON` });
        return z.NEVER;
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        ctx.addIssue({ code: "custom", message: "must be JSON text (an object written as text)" });
        return z.NEVER;
      }
      const deep = tooDeep(value);
      if (deep) {
        ctx.addIssue({ code: "custom", message: deep.message });
        return z.NEVER;
      }
      return value;
    })
    .pipe(inner)
    .describe(description);
  JSON_TEXT.add(schema);
  return schema;
}

/** Whether a field is taken as JSON text (unwrapping optional). */
export function isJsonText(schema: z.ZodType): boolean {
  let current: z.ZodType | undefined = schema;
  while (current) {
    if (JSON_TEXT.has(current)) return true;
    const def = current._zod.def as { type: string; innerType?: z.ZodType };
    current = def.type === "optional" ? def.innerType : undefined;
  }
  return false;
}

/** A JSON object (keys to any values), the usual free-form shape. */
export const jsonObject = z.record(z.string(), z.unknown());
