import { z } from "zod";
import type { ContractOperation, ContractParameter, JsonSchema } from "./types.js";

/**
 * The zod validators of a contract operation, built from its JSON Schemas the first time it is
 * called (about a millisecond each; building all 158 at startup would cost a tenth of a second
 * that most sessions never use).
 */
export interface Validators {
  params: z.ZodObject | null;
  query: z.ZodObject | null;
  body: z.ZodType | null;
}

const built = new WeakMap<ContractOperation, Validators>();

export function validatorsOf(operation: ContractOperation): Validators {
  let validators = built.get(operation);
  if (!validators) {
    validators = {
      params: parametersSchema(operation.pathParameters),
      query: parametersSchema(operation.queryParameters),
      body: operation.body ? bodySchema(operation.body) : null,
    };
    built.set(operation, validators);
  }
  return validators;
}

function parametersSchema(parameters: readonly ContractParameter[]): z.ZodObject | null {
  if (parameters.length === 0) return null;
  return z.strictObject(
    Object.fromEntries(
      parameters.map((p) => {
        const schema = fromJsonSchema(p.schema);
        return [p.name, p.required ? schema : schema.optional()];
      }),
    ),
  );
}

function bodySchema(body: NonNullable<ContractOperation["body"]>): z.ZodType {
  const schema =
    body.type === "multipart"
      ? fromJsonSchema(withFileFields(body.schema))
      : fromJsonSchema(body.schema);
  return body.required ? schema : schema.optional();
}

/**
 * A file inside a multipart body, as a model can give one: its name, its type, and its bytes in
 * base64 (or, for a text file, the text itself).
 */
export const FILE_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    filename: { type: "string", minLength: 1, maxLength: 255 },
    content_type: { type: "string", minLength: 3, maxLength: 255 },
    content_base64: { type: "string", minLength: 1 },
    text: { type: "string", minLength: 1 },
  },
  required: ["filename"],
  additionalProperties: false,
};

/** The binary fields of a multipart body: strings with a media type or `format: binary`. */
export function fileFields(schema: JsonSchema): string[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return Object.keys(properties).filter(
    (name) =>
      properties[name]?.format === "binary" ||
      typeof properties[name]?.contentMediaType === "string",
  );
}

/** The multipart schema with each binary field replaced by the file object the model sends. */
export function withFileFields(schema: JsonSchema): JsonSchema {
  const files = fileFields(schema);
  if (files.length === 0) return schema;
  const properties = { ...((schema.properties ?? {}) as Record<string, JsonSchema>) };
  for (const name of files) properties[name] = FILE_SCHEMA;
  return { ...schema, properties };
}

function fromJsonSchema(schema: JsonSchema): z.ZodType {
  return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
}
