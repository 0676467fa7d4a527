import type { HttpMethod } from "../catalogue.js";

/** A JSON Schema as the contract writes it (OpenAPI 3.1 is JSON Schema 2020-12). */
export type JsonSchema = Record<string, unknown>;

/** One path or query parameter the model may set. */
export interface ContractParameter {
  name: string;
  required: boolean;
  description: string;
  schema: JsonSchema;
}

/**
 * One operation of the key's contract export, normalised once at startup: everything the
 * server needs to offer it, validate it, send it and describe it, with every `$ref` resolved.
 * The headers the server owns (Authorization, Idempotency-Key, X-Request-ID, delegation) are
 * not parameters here: the model never sees them.
 */
export interface ContractOperation {
  /** The `operationId`, which is the API's `route_id`. */
  id: string;
  method: HttpMethod;
  path: string;
  scope: string;
  /** Read only when the scope ends in `:read` (never from the verb); anything else writes. */
  kind: "read" | "write";
  /** The delegated capability of a `/users/me*` operation (spec part 5), or null. */
  capability: string | null;
  /** The contract's tag. */
  family: string;
  summary: string;
  description: string;
  pathParameters: ContractParameter[];
  queryParameters: ContractParameter[];
  body: { required: boolean; type: "json" | "multipart"; schema: JsonSchema } | null;
  /** The content types of its success answers; JSON unless the answer is a file. */
  responseTypes: string[];
  /** Vendor hints the export may carry. */
  billable: boolean;
}

export interface Contract {
  /** Where it came from, for messages: a file name or "the sandbox's export". */
  source: string;
  /** `info.x-contract-revision` or `info.version`. */
  revision: string;
  /** Families (tags) with their descriptions, in the export's order. */
  families: ReadonlyMap<string, string>;
  operations: ReadonlyMap<string, ContractOperation>;
  /** Operations left out, each with why, for the startup log. */
  warnings: string[];
}
