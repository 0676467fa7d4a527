import type { jsonSchemaValidator } from "@modelcontextprotocol/server";

type FlatSchema = {
  properties?: Record<string, { type?: string; enum?: unknown[] }>;
  required?: string[];
};

/**
 * Validates answers to confirmation forms. MCP form elicitation only allows flat objects of
 * primitive properties, so this is the whole rule set; it spares every start the cost of
 * building the SDK's default validator (Ajv) for the one boolean this server asks.
 */
export const formValidator: jsonSchemaValidator = {
  getValidator(schema) {
    const { properties = {}, required = [] } = schema as FlatSchema;
    return (input) => {
      const fail = (errorMessage: string) => ({
        valid: false as const,
        data: undefined,
        errorMessage,
      });
      if (!input || typeof input !== "object" || Array.isArray(input))
        return fail("the answer must be an object");
      const answer = input as Record<string, unknown>;
      for (const name of required) if (!(name in answer)) return fail(`${name} is required`);
      for (const [name, value] of Object.entries(answer)) {
        const property = properties[name];
        if (!property) continue;
        const type = property.type === "integer" ? "number" : property.type;
        if (type && typeof value !== type) return fail(`${name} must be a ${property.type}`);
        if (property.enum && !property.enum.includes(value))
          return fail(`${name} must be one of ${property.enum.join(", ")}`);
      }
      return { valid: true as const, data: input as never, errorMessage: undefined };
    };
  },
};
