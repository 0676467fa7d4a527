/**
 * Small facts about JSON-RPC messages that the transports need before the SDK sees them.
 */

/** -32600: the message is not a valid request or response (JSON-RPC 2.0, 5.1). */
export const INVALID_REQUEST = -32600;

/**
 * A client's answer to one of our requests (an elicitation, say) that is malformed, turned into
 * an error answer with the same id. The SDK drops a malformed message, which would leave our
 * request waiting for its timeout; an error answer settles it at once, as a refusal.
 */
export function repairResponse(message: unknown): unknown {
  if (!message || typeof message !== "object" || Array.isArray(message)) return message;
  const m = message as Record<string, unknown>;
  if ("method" in m || !("id" in m)) return message;
  if (typeof m.id !== "string" && typeof m.id !== "number") return message;
  const result = m.result;
  const error = m.error as { code?: unknown; message?: unknown } | undefined;
  const validResult =
    "result" in m && result !== null && typeof result === "object" && !Array.isArray(result);
  const validError =
    !("result" in m) &&
    !!error &&
    typeof error === "object" &&
    Number.isInteger(error.code) &&
    typeof error.message === "string";
  if (validResult || validError) return message;
  return {
    jsonrpc: "2.0",
    id: m.id,
    error: { code: INVALID_REQUEST, message: "The client's answer was malformed." },
  };
}
