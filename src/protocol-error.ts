/**
 * A JSON-RPC error to answer a request with. The SDK's McpError prefixes its message with
 * "MCP error <code>:", and clients prefix it again when they rethrow: this one carries the
 * sentence alone, which the SDK sends as it is (`code`, `message`, `data`).
 */
export class ProtocolError extends Error {
  override name = "ProtocolError";

  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
