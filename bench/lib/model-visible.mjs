/**
 * What a model reads of a tool listing, the measure a client pays in context: each tool's
 * `JSON.stringify({ name, description, inputSchema })`, summed over tools/list, in bytes.
 * `npm run bench` prints it and test/mcp/providers.test.ts holds it to its budget.
 */
export function modelVisibleBytes(tools) {
  return tools.reduce(
    (sum, { name, description, inputSchema }) =>
      sum + Buffer.byteLength(JSON.stringify({ name, description, inputSchema })),
    0,
  );
}

/** At most this many bytes with the full demo contract (issue: at most 16,000). */
export const MODEL_VISIBLE_TARGET = 16_000;
