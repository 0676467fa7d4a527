import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { hasDotSegment } from "../base-path.js";
import type { HttpMethod } from "../catalogue.js";
import { capabilityOf } from "./capabilities.js";
import { RefResolver } from "./refs.js";
import type { Contract, ContractOperation, ContractParameter, JsonSchema } from "./types.js";

export class ContractError extends Error {
  override name = "ContractError";
}

const METHODS: readonly HttpMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
/** The scope of an operation that names none: not a read, so a write (see normaliseOperation). */
export const UNSCOPED = "unscoped";
const OPERATION_ID = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;

/** Reads the key's contract export (PORTFOLIO_CONTRACT_FILE), JSON or YAML. */
export async function readContractFile(file: string): Promise<Contract> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ContractError(
      `PORTFOLIO_CONTRACT_FILE (${file}): cannot be read (${(error as Error).message}).`,
    );
  }
  let document: unknown;
  try {
    document = /\.ya?ml$/i.test(extname(file))
      ? (await import("yaml")).parse(text)
      : JSON.parse(text);
  } catch (error) {
    throw new ContractError(
      `PORTFOLIO_CONTRACT_FILE (${file}): not valid ${/\.ya?ml$/i.test(file) ? "YAML" : "JSON"} (${(error as Error).message}).`,
    );
  }
  return normaliseContract(document, `PORTFOLIO_CONTRACT_FILE (${file})`);
}

/** An operation left out of the contract, and why: reported once, at startup. */
class Skipped extends Error {}

/**
 * Normalises an OpenAPI 3.x export into one record per operation, once. It checks what the
 * server relies on (ids, methods, paths and their placeholders, scopes, body types) rather than
 * validating the whole document: startup stays fast. Only a document that cannot be read as an
 * OpenAPI 3.x export stops the server; a malformed operation is left out, and the contract's
 * `warnings` name it and the problem, so the rest of the contract is served. An operation whose
 * kind cannot be told (no `x-scope`, no role in its security requirement) is a write, with a
 * warning: the gate then asks a person before it is sent.
 */
export function normaliseContract(document: unknown, source: string): Contract {
  const fail: (why: string) => never = (why) => {
    throw new ContractError(`${source}: ${why}.`);
  };
  if (!isObject(document)) return fail("not an OpenAPI document (expected a JSON object)");
  const version = document.openapi;
  if (typeof version !== "string" || !version.startsWith("3."))
    fail(`expected an OpenAPI 3.x document, found openapi: ${JSON.stringify(version ?? null)}`);
  if (!isObject(document.paths)) fail("has no paths");
  const info = isObject(document.info) ? document.info : {};
  const refs = new RefResolver(document);
  const families = familiesOf(document);
  const warnings: string[] = [];
  const warn = (why: string) => warnings.push(`${source}: ${why}`);
  const operations = new Map<string, ContractOperation>();
  for (const [path, item] of pathItems(document.paths as Record<string, unknown>, refs, warn)) {
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const raw = item[method.toLowerCase()];
      if (raw === undefined) continue;
      const operation = readOperation(
        raw,
        { method, path, shared, document, refs },
        operations,
        warn,
      );
      if (!operation) continue;
      operations.set(operation.id, operation);
      if (!families.has(operation.family)) families.set(operation.family, operation.family);
    }
  }
  const revision = info["x-contract-revision"] ?? info.version;
  return {
    source,
    revision: typeof revision === "string" ? revision : "unknown",
    families,
    operations,
    warnings,
  };
}

/** The families the document's tags describe: a tag's name and its description. */
function familiesOf(document: Record<string, unknown>): Map<string, string> {
  const families = new Map<string, string>();
  if (Array.isArray(document.tags))
    for (const tag of document.tags)
      if (isObject(tag) && typeof tag.name === "string")
        families.set(tag.name, typeof tag.description === "string" ? tag.description : tag.name);
  return families;
}

/** Each path with its item resolved; an item that cannot be read is left out, with a warning. */
function* pathItems(
  paths: Record<string, unknown>,
  refs: RefResolver,
  warn: (why: string) => void,
): Generator<[string, Record<string, unknown>]> {
  for (const [path, rawItem] of Object.entries(paths)) {
    let item: unknown;
    try {
      item = refs.deref(rawItem);
    } catch (error) {
      warn(`paths["${path}"] left out: ${(error as Error).message}.`);
      continue;
    }
    if (!isObject(item)) {
      warn(`paths["${path}"] left out: it is not an object.`);
      continue;
    }
    yield [path, item];
  }
}

/**
 * One method of a path item as an operation, or null when it is left out (the token exchange,
 * or a malformed operation, which the warnings name with the reason).
 */
function readOperation(
  raw: unknown,
  context: Omit<OperationContext, "id">,
  known: ReadonlyMap<string, ContractOperation>,
  warn: (why: string) => void,
): ContractOperation | null {
  const { method, path } = context;
  const where = `${method} ${path}`;
  const id = isObject(raw) ? raw.operationId : undefined;
  const name = typeof id === "string" ? `operation ${id} (${where})` : where;
  const skip: (why: string) => never = (why) => {
    throw new Skipped(why);
  };
  try {
    if (!isObject(raw)) skip("it is not an operation object");
    if (typeof id !== "string" || !OPERATION_ID.test(id))
      skip("it has no usable operationId (letters, digits and _ . -, at most 128)");
    // Resolved, the URL would leave the API's base path (WHATWG URL reads %2e as a dot).
    if (hasDotSegment(path))
      skip("its path has a . or .. segment (or %2e), which would leave the API's base path");
    const operation = normaliseOperation(
      raw as Record<string, unknown>,
      { ...context, id: id as string },
      skip,
      (why) => warn(`${name}: ${why}.`),
    );
    const taken = operation && known.get(operation.id);
    if (taken) skip(`its operationId is already used by ${taken.method} ${taken.path}`);
    return operation;
  } catch (error) {
    if (!(error instanceof Skipped) && !(error instanceof ContractError)) throw error;
    warn(`${name} left out: ${error.message}; the rest of the contract is served.`);
    return null;
  }
}

interface OperationContext {
  id: string;
  method: HttpMethod;
  path: string;
  shared: unknown[];
  document: Record<string, unknown>;
  refs: RefResolver;
}

/** One operation, or null for the token exchange: the server owns it and offers it to no one. */
function normaliseOperation(
  raw: Record<string, unknown>,
  context: OperationContext,
  fail: (why: string) => never,
  warn: (why: string) => void,
): ContractOperation | null {
  const { id, method, path, refs } = context;
  const security = raw.security ?? context.document.security;
  if (Array.isArray(security) && security.length === 0) return null;
  if (!path.startsWith("/") || /[?#\s]/.test(path))
    fail("its path must start with / and hold no query, fragment or space");

  const named = scopeOf(raw, security);
  // The contract issue's rule: an operation whose kind cannot be told is a write.
  if (!named)
    warn(
      "names no scope (x-scope, or a role in its security requirement); it is served as a write, confirmed by a person before it is sent",
    );
  const scope = named ?? UNSCOPED;
  const { pathParameters, queryParameters } = parametersOf(raw, context, fail);
  const tags = Array.isArray(raw.tags) ? raw.tags.filter((t) => typeof t === "string") : [];
  const delegation = isObject(raw["x-delegation"]) ? raw["x-delegation"] : null;
  const summary = typeof raw.summary === "string" ? raw.summary : "";
  return {
    id,
    method,
    path,
    scope,
    kind: scope.endsWith(":read") ? "read" : "write",
    capability:
      delegation && typeof delegation.capability === "string"
        ? delegation.capability
        : capabilityOf(path),
    family: (tags[0] as string | undefined) ?? scope.split(":")[0] ?? "other",
    summary,
    description: typeof raw.description === "string" ? raw.description : "",
    pathParameters,
    queryParameters,
    body: bodyOf(raw.requestBody, refs, fail),
    responseTypes: responseTypesOf(raw.responses, refs),
    creates: createsWith(raw.responses),
    billable: raw["x-billable"] === true || /(?<!never |not )\bbillable\b/i.test(summary),
  };
}

/** `x-scope`, else the first role named by a security requirement (3.1 allows role lists). */
/** The operation's path and query parameters; each placeholder of its path declared, and only those. */
function parametersOf(
  raw: Record<string, unknown>,
  context: OperationContext,
  fail: (why: string) => never,
): { pathParameters: ContractParameter[]; queryParameters: ContractParameter[] } {
  const { path, refs } = context;
  const parameters = [...context.shared, ...(Array.isArray(raw.parameters) ? raw.parameters : [])]
    .map((p) => refs.deref(p))
    .filter(isObject);
  const byPlace = (place: string) =>
    parameters
      .filter((p) => p.in === place)
      .map((p): ContractParameter => {
        if (typeof p.name !== "string" || p.name === "") fail(`a ${place} parameter has no name`);
        return withLazySchema(
          {
            name: p.name as string,
            required: place === "path" || p.required === true,
            description: typeof p.description === "string" ? p.description : "",
          },
          refs,
          p.schema,
        );
      });
  const pathParameters = byPlace("path");
  const placeholders = [...path.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1] ?? "");
  const declared = pathParameters.map((p) => p.name);
  const missing = placeholders.filter((p) => !declared.includes(p));
  if (missing.length > 0) fail(`its path uses {${missing.join("}, {")}} with no path parameter`);
  const extra = declared.filter((p) => !placeholders.includes(p));
  if (extra.length > 0) fail(`path parameter ${extra.join(", ")} is not in its path`);
  return { pathParameters, queryParameters: byPlace("query") };
}

function scopeOf(raw: Record<string, unknown>, security: unknown): string | null {
  if (typeof raw["x-scope"] === "string" && raw["x-scope"] !== "") return raw["x-scope"];
  if (!Array.isArray(security)) return null;
  for (const requirement of security) {
    if (!isObject(requirement)) continue;
    for (const roles of Object.values(requirement))
      if (Array.isArray(roles) && typeof roles[0] === "string") return roles[0];
  }
  return null;
}

function bodyOf(
  raw: unknown,
  refs: RefResolver,
  fail: (why: string) => never,
): ContractOperation["body"] {
  const body = refs.deref(raw);
  if (!isObject(body) || !isObject(body.content)) return null;
  const content = body.content as Record<string, unknown>;
  const json = Object.keys(content).find((t) => /^application\/([\w.+-]+\+)?json\b/.test(t));
  const type = json ?? (content["multipart/form-data"] ? "multipart/form-data" : null);
  if (!type)
    return fail(
      `its request body is ${Object.keys(content).join(", ") || "empty"}; only JSON and multipart/form-data can be sent`,
    );
  const media = refs.deref(content[type]);
  return withLazySchema(
    { required: body.required === true, type: json ? ("json" as const) : ("multipart" as const) },
    refs,
    isObject(media) ? media.schema : undefined,
  );
}

/** The status of a success that creates something (201, or 202 for an accepted request). */
function createsWith(raw: unknown): 201 | 202 | null {
  if (!isObject(raw)) return null;
  if ("201" in raw) return 201;
  return "202" in raw ? 202 : null;
}

function responseTypesOf(raw: unknown, refs: RefResolver): string[] {
  if (!isObject(raw)) return ["application/json"];
  const types = new Set<string>();
  for (const [status, response] of Object.entries(raw)) {
    if (!/^2\d\d$/.test(status)) continue;
    const resolved = refs.deref(response);
    if (isObject(resolved) && isObject(resolved.content))
      for (const type of Object.keys(resolved.content)) types.add(type);
  }
  return types.size > 0 ? [...types] : ["application/json"];
}

/**
 * Gives a record its schema, inlined on first use: most operations are never called in a given
 * session, and startup should not pay for copying all of them.
 */
function withLazySchema<T extends object>(
  record: T,
  refs: RefResolver,
  raw: unknown,
): T & { readonly schema: JsonSchema } {
  let inlined: JsonSchema | undefined;
  return Object.defineProperty(record, "schema", {
    enumerable: true,
    get: () => {
      inlined ??= refs.inline(isObject(raw) ? raw : {});
      return inlined;
    },
  }) as T & { readonly schema: JsonSchema };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
