import { createHash } from "node:crypto";
import { z } from "zod";
import { IDEMPOTENCY_KEY_PATTERN } from "../idempotency.js";
import { hasScope, type SandboxKey } from "../keys.js";
import { problemSchema } from "../problem.js";
import type { OperationMeta } from "../routing.js";
import { FAMILIES } from "./families.js";
import { type JsonSchema, SchemaCollector } from "./json-schema.js";
import { inContractOrder } from "./table.js";

/**
 * The per-key export (spec part 5: "the administrator can export a version of the contract
 * filtered for a given key"): an OpenAPI 3.1 document generated from the operations the
 * sandbox serves, filtered by the key's scopes, route allowlist and delegated capabilities,
 * in the shape ../shared/contract-routes.md describes.
 */

export interface ContractOptions {
  /** The base address, ending with /v1. */
  serverUrl: string;
  entityId: string;
  environment: string;
  delegationHeaderPrefix: string;
  /** When the export was made (ISO date-time), in `x-key`. */
  exportedAt: string;
}

export type OpenApiDocument = Record<string, unknown> & {
  paths: Record<string, Record<string, OpenApiOperation>>;
};
export type OpenApiOperation = Record<string, unknown> & { operationId: string };

/** Whether an operation belongs to a key's export: what the pipeline would let it call. */
export function visibleTo(key: SandboxKey, op: OperationMeta): boolean {
  if (op.kind === "exchange") return true;
  if (key.routes && !key.routes.includes(op.id)) return false;
  if (op.scope === null || !hasScope(key, op.scope)) return false;
  return !op.capability || key.capabilities.includes(op.capability);
}

export function buildContract(
  operations: readonly OperationMeta[],
  key: SandboxKey,
  options: ContractOptions,
): OpenApiDocument {
  const collector = new SchemaCollector();
  const visible = inContractOrder(operations.filter((op) => visibleTo(key, op)));
  const { paths, described } = describePaths(visible, collector);
  // A key that sees everything has just described the whole contract: its hash costs nothing more.
  if (visible.length === operations.length && !revisions.has(operations))
    revisions.set(operations, revisionOf(described, collector));
  const tags = new Set(visible.map((op) => op.family));
  collector.convert(problemSchema, "output"); // every refusal refers to it
  return {
    openapi: "3.1.0",
    info: {
      title: "Partner API",
      version: "1",
      description: `The operations this key may call: ${visible.length} of the contract's.`,
      "x-contract-revision": contractRevision(operations),
    },
    servers: [{ url: options.serverUrl }],
    "x-key": keyExtension(key, options),
    security: [{ partnerBearer: [] }],
    tags: FAMILIES.filter((f) => tags.has(f.tag)).map((f) => ({
      name: f.tag,
      description: `${f.name}: ${f.description}`,
    })),
    paths,
    components: components(collector, options),
  };
}

/** Each operation described once, filed under its path and method. */
function describePaths(visible: readonly OperationMeta[], collector: SchemaCollector) {
  const paths: OpenApiDocument["paths"] = {};
  const described: OpenApiOperation[] = [];
  for (const op of visible) {
    const operation = describe(op, collector);
    described.push(operation);
    paths[op.path] ??= {};
    (paths[op.path] as Record<string, OpenApiOperation>)[op.method.toLowerCase()] = operation;
  }
  return { paths, described };
}

/** `x-key`: who the export is for, and what that key may do. */
function keyExtension(key: SandboxKey, options: ContractOptions) {
  return {
    key_id: key.keyId,
    label: key.label,
    entity_id: options.entityId,
    environment: options.environment,
    scopes: [...key.scopes],
    capabilities: [...key.capabilities],
    ...(key.routes ? { routes: [...key.routes] } : {}),
    exported_at: options.exportedAt,
  };
}

/** The bearer scheme, the shared parameters and refusals, and every schema collected. */
function components(collector: SchemaCollector, options: ContractOptions) {
  return {
    securitySchemes: {
      partnerBearer: {
        type: "http",
        scheme: "bearer",
        description:
          "Bearer from POST /auth/token. Each operation lists the scope it needs as a role of this requirement (OpenAPI 3.1) and in x-scope.",
      },
    },
    parameters: commonParameters(options.delegationHeaderPrefix),
    responses: Object.fromEntries(
      Object.entries(SHARED_REFUSALS).map(([status, codes]) => [
        `Problem${status}`,
        problemResponse(Number(status), codes, { $ref: "#/components/schemas/Problem" }),
      ]),
    ),
    schemas: sortedKeys(collector.components),
  };
}

/** A hash of everything the full contract says, so that two exports can be compared. */
const revisions = new WeakMap<readonly OperationMeta[], string>();
function contractRevision(operations: readonly OperationMeta[]): string {
  const known = revisions.get(operations);
  if (known) return known;
  const collector = new SchemaCollector();
  const described = inContractOrder(operations).map((op) => describe(op, collector));
  const revision = revisionOf(described, collector);
  revisions.set(operations, revision);
  return revision;
}

const revisionOf = (described: OpenApiOperation[], collector: SchemaCollector) =>
  createHash("sha256")
    .update(JSON.stringify([described, collector.components]))
    .digest("hex")
    .slice(0, 16);

function describe(op: OperationMeta, schemas: SchemaCollector): OpenApiOperation {
  const write = op.kind === "write";
  const parameters: unknown[] = [{ $ref: "#/components/parameters/XRequestId" }];
  if (write) parameters.push({ $ref: "#/components/parameters/IdempotencyKey" });
  if (op.capability)
    parameters.push(
      { $ref: "#/components/parameters/DelegatedUserEmail" },
      { $ref: "#/components/parameters/DelegatedUserId" },
    );
  for (const [where, schema] of [
    ["path", op.params],
    ["query", op.query],
  ] as const) {
    if (!schema) continue;
    const object = schemas.convert(schema, "input");
    const required = new Set((object.required as string[] | undefined) ?? []);
    for (const [name, property] of Object.entries(
      (object.properties ?? {}) as Record<string, JsonSchema>,
    )) {
      parameters.push({
        name,
        in: where,
        required: where === "path" || required.has(name),
        schema: property,
      });
    }
  }
  return {
    operationId: op.id,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.family],
    security: op.scope === null ? [] : [{ partnerBearer: [op.scope] }],
    ...(op.scope === null ? {} : { "x-scope": op.scope }),
    ...(write ? { "x-idempotency": "required" } : {}),
    ...(op.capability ? { "x-delegation": { capability: op.capability } } : {}),
    parameters,
    ...requestBody(op, schemas),
    responses: {
      ...successResponse(op, schemas),
      ...refusalResponses(op),
    },
  };
}

function requestBody(op: OperationMeta, schemas: SchemaCollector): Record<string, unknown> {
  if (op.upload) {
    const fields = op.body ? schemas.convert(op.body, "input") : { properties: {} };
    const file = op.upload.file;
    return {
      requestBody: {
        required: true,
        content: {
          "multipart/form-data": {
            schema: {
              type: "object",
              properties: {
                ...(fields.properties as object),
                [file]: { type: "string", contentMediaType: "application/octet-stream" },
              },
              required: [file, ...((fields.required as string[] | undefined) ?? [])],
              additionalProperties: false,
            },
          },
        },
      },
    };
  }
  if (!op.body) return {};
  return {
    requestBody: {
      // A body the route accepts absent (`.optional()`) is not required.
      required: !op.body.safeParse(undefined).success,
      content: { "application/json": { schema: schemas.convert(op.body, "input") } },
    },
  };
}

function successResponse(op: OperationMeta, schemas: SchemaCollector) {
  const { response } = op;
  const headers =
    op.kind === "write"
      ? {
          headers: {
            "Idempotent-Replayed": {
              description: "true when this is the stored answer to an earlier identical write.",
              schema: { type: "string", enum: ["true", "false"] },
            },
          },
        }
      : {};
  if (response.status === 204) {
    return { "204": { description: "Done; no content.", ...headers } };
  }
  if ("binary" in response) {
    const types = [response.binary].flat();
    return {
      [response.status]: {
        description: `A file (${types.join(", ")}), not JSON: check the status and the content type before reading it.`,
        content: Object.fromEntries(
          types.map((type) => [type, { schema: { type: "string", contentMediaType: type } }]),
        ),
      },
    };
  }
  const content = { "application/json": { schema: schemas.convert(response.schema, "output") } };
  if ("created" in response) {
    return {
      "200": { description: "Updated (or unchanged).", ...headers, content },
      "201": { description: "Created.", ...headers, content },
    };
  }
  return {
    [response.status]: {
      description: STATUS_DESCRIPTIONS[response.status] ?? "OK.",
      ...headers,
      content,
    },
  };
}

const STATUS_DESCRIPTIONS: Record<number, string> = {
  201: "Created.",
  202: "Accepted: the work goes on after this answer.",
};

/** What the pipeline refuses on every business operation (spec part 7), by status. */
const COMMON_REFUSALS: Record<number, readonly string[]> = {
  401: ["missing_token", "invalid_token", "token_expired", "key_revoked"],
  403: ["insufficient_scope", "route_not_allowed", "ip_not_allowed"],
  422: ["validation_failed"],
  429: ["rate_limit_exceeded", "rate_limit_ban"],
  500: ["internal_error"],
};

/** Refusals published once as components: an operation refers to one when its codes match. */
const SHARED_REFUSALS: Record<number, readonly string[]> = {
  ...COMMON_REFUSALS,
  400: ["delegation_header_missing", "delegation_headers_conflict"],
  // Spec part 7's 404: the delegated subject is not a user of the entity.
  404: ["delegated_user_not_found"],
  409: ["idempotency_key_reused", "idempotency_request_in_progress"],
  413: ["payload_too_large"],
  415: ["unsupported_media_type"],
};

/** The token exchange refuses on its own terms: no bearer, no rate limit. */
const EXCHANGE_REFUSALS: Record<number, readonly string[]> = {
  401: ["invalid_signature", "timestamp_out_of_window", "signature_replayed", "nonce_reused"],
  422: ["validation_failed", "invalid_json"],
  500: ["internal_error"],
};

/** Every refusal an operation can produce: the pipeline's, by what the operation is, and its own. */
export function refusalsOf(op: OperationMeta): Map<number, string[]> {
  const refusals = new Map<number, string[]>();
  const add = (status: number, codes: readonly string[]) =>
    refusals.set(status, [...new Set([...(refusals.get(status) ?? []), ...codes])]);
  for (const [status, codes] of Object.entries(
    op.kind === "exchange" ? EXCHANGE_REFUSALS : COMMON_REFUSALS,
  ))
    add(Number(status), codes);
  if (op.capability) {
    add(400, SHARED_REFUSALS[400] ?? []);
    add(403, ["capability_missing", "delegated_user_not_approved", "delegated_user_not_allowed"]);
    if (op.kind === "write") add(403, ["delegated_user_read_only"]);
    add(404, SHARED_REFUSALS[404] ?? []);
  }
  if (op.kind === "write") {
    add(409, SHARED_REFUSALS[409] ?? []);
    add(422, ["idempotency_key_missing", "idempotency_key_invalid"]);
  }
  if (op.body || op.upload) {
    add(413, SHARED_REFUSALS[413] ?? []);
    add(415, SHARED_REFUSALS[415] ?? []);
    add(422, [op.upload ? "invalid_multipart" : "invalid_json"]);
  }
  for (const [status, codes] of Object.entries(op.refusals ?? {})) add(Number(status), codes);
  return new Map([...refusals].sort(([a], [b]) => a - b));
}

function refusalResponses(op: OperationMeta): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, codes] of refusalsOf(op)) {
    const common = SHARED_REFUSALS[status];
    out[status] =
      common && common.join() === codes.join()
        ? { $ref: `#/components/responses/Problem${status}` }
        : problemResponse(status, codes, { $ref: "#/components/schemas/Problem" });
  }
  return out;
}

const STATUS_MEANING: Record<number, string> = {
  400: "A delegation header is missing, or both were sent.",
  401: "No valid bearer (or, on the token exchange, no valid signature).",
  403: "The key, or the delegated user, may not do this.",
  404: "Not found in this entity.",
  409: "Conflicts with the resource's state or an earlier request.",
  410: "No longer available.",
  413: "The body is too large.",
  415: "The body's content type is not accepted.",
  422: "The parameters or the body are invalid; `errors` names each field and rule.",
  429: "Rate limit exceeded or progressive ban: retry after Retry-After seconds.",
  500: "Unexpected server error.",
};

function problemResponse(status: number, codes: readonly string[], schema: JsonSchema) {
  return {
    description: `${STATUS_MEANING[status] ?? "Refused."} reason_code: ${codes.join(", ")}.`,
    "x-reason-codes": [...codes],
    ...(status === 429
      ? {
          headers: {
            "Retry-After": {
              description: "Cooldown in seconds.",
              schema: { type: "string", pattern: "^\\d+$" },
            },
          },
        }
      : {}),
    content: { "application/problem+json": { schema } },
  };
}

function commonParameters(delegationPrefix: string) {
  const header = (name: string, schema: z.ZodType, required: boolean, description: string) => ({
    name,
    in: "header",
    required,
    description,
    schema: new SchemaCollector().convert(schema, "input"),
  });
  const delegated = (suffix: string, what: string) =>
    header(
      `${delegationPrefix}-${suffix}`,
      z.string().min(1).max(320),
      false,
      `The user this call acts for, by ${what}. Send exactly one of ${delegationPrefix}-Email and ${delegationPrefix}-Id (spec part 5).`,
    );
  return {
    XRequestId: header(
      "X-Request-ID",
      z
        .string()
        .max(200)
        .regex(/^[!-~]+$/),
      false,
      "Correlation id, echoed in the response header and in problem documents.",
    ),
    IdempotencyKey: header(
      "Idempotency-Key",
      z.string().min(1).max(255).regex(IDEMPOTENCY_KEY_PATTERN),
      true,
      "Required on every write. Reuse it to retry the same write with the same content; a new write needs a new key.",
    ),
    DelegatedUserEmail: delegated("Email", "email"),
    DelegatedUserId: delegated("Id", "user id"),
  };
}

function sortedKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
