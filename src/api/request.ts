import { describeIssue, type FieldError } from "@portfolio-mcp/field-errors";
import { delegationHeaders } from "../auth/delegation.js";
import type { ApiSettings, DelegatedUser } from "../config.js";
import { ApiError, invalidInput } from "../http/errors.js";
import { staysUnderBase } from "./base-path.js";
import type { Operation } from "./catalogue.js";
import { multipartBody } from "./multipart.js";
import { XLSX_MIME } from "./response.js";

/** What a call carries besides its headers: path parameters, query, body. */
export interface CallInput {
  path?: unknown;
  query?: unknown;
  body?: unknown;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Sent as X-Request-ID; generated when absent. */
  requestId?: string;
  /** For writes: the intent's key, reused by every retry. Generated when absent. */
  idempotencyKey?: string;
  /** Whom a `/users/me*` call acts for; defaults to the configured delegated user. */
  delegatedUser?: DelegatedUser | null;
  /**
   * Sends input the catalogue would refuse. Only for `doctor`'s probes, which send a request
   * the API must refuse, to learn whether the key may write without writing anything.
   */
  unchecked?: boolean;
  /** Sends the input as it is: a confirmed write, checked when it was drafted. */
  prevalidated?: boolean;
}

/** Everything about a request that does not change between its attempts. */
export interface PreparedCall {
  operation: Operation;
  url: string;
  body: string | Buffer | undefined;
  contentType: string | undefined;
  delegation: Record<string, string>;
}

/** The media types an operation's answer may come in. */
export function acceptOf(operation: Operation): string {
  if (operation.response === "xlsx") return XLSX_MIME;
  if (operation.response === "binary")
    return [
      ...(operation.contract?.responseTypes ?? []),
      "application/problem+json",
      "*/*;q=0.1",
    ].join(", ");
  return "application/json";
}

/** Validates a call's input and builds its URL, body and delegation, once, before any attempt. */
export function prepareCall(
  settings: ApiSettings,
  operation: Operation,
  input: CallInput,
  options: CallOptions,
): PreparedCall {
  const { params, query, body } = checkedInput(operation, input, options);
  const delegation = delegationFor(settings, operation, options.delegatedUser);
  const path = pathOf(settings, operation, params);
  const qs = queryString(query);
  const encoded = encodeBody(operation, body);
  return {
    operation,
    url: `${settings.baseUrl}${path}${qs ? `?${qs}` : ""}`,
    body: encoded?.bytes,
    contentType: encoded?.contentType,
    delegation,
  };
}

type Schema = Operation["params"] | Operation["query"] | Operation["body"];

/** The input as the operation's schemas read it; every field error at once, or none. */
function checkedInput(operation: Operation, input: CallInput, options: CallOptions) {
  const errors: FieldError[] = [];
  const parse = (schema: Schema, value: unknown, what: string) =>
    options.prevalidated ? value : parsePart(operation.id, schema, value, what, errors);
  const params = parse(operation.params, input.path, "path parameters") as
    | Record<string, unknown>
    | undefined;
  const query = parse(operation.query, input.query, "query") as Record<string, unknown> | undefined;
  const body = options.unchecked ? input.body : parse(operation.body, input.body, "body");
  // A URL resolves `.` and `..` segments, which would send the call to another route.
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value === "." || value === "..")
      errors.push({ field: name, rule: "not a dot segment", message: "must not be . or .." });
  }
  if (errors.length > 0) throw invalidInput(operation.id, errors);
  return { params, query, body };
}

/** One part of the input through its schema; a part the operation does not take must be empty. */
function parsePart(
  id: string,
  schema: Schema,
  value: unknown,
  what: string,
  errors: FieldError[],
): unknown {
  if (!schema) {
    const empty =
      value === undefined ||
      (typeof value === "object" && value !== null && Object.keys(value).length === 0);
    if (!empty)
      errors.push({ field: what, rule: "not accepted", message: `${id} takes no ${what}` });
    return undefined;
  }
  const result = schema.safeParse(value ?? (what === "body" ? undefined : {}));
  if (result.success) return result.data as unknown;
  errors.push(...result.error.issues.map((issue) => describeIssue(issue)));
  return undefined;
}

/** The headers naming the user a `/users/me*` call acts for; none for other operations. */
function delegationFor(
  settings: ApiSettings,
  operation: Operation,
  chosen: DelegatedUser | null | undefined,
): Record<string, string> {
  if (!operation.capability) return {};
  const user = chosen === undefined ? settings.delegatedUser : chosen;
  if (!user) {
    throw new ApiError(
      `${operation.id} acts for a user: set PORTFOLIO_DELEGATED_USER_EMAIL or PORTFOLIO_DELEGATED_USER_ID (nothing was sent).`,
      { code: "not_configured", operationId: operation.id },
    );
  }
  return delegationHeaders(settings.delegationHeaderPrefix, user);
}

/** The route's path with its parameters filled in, refused if it would leave the base path. */
function pathOf(
  settings: ApiSettings,
  operation: Operation,
  params: Record<string, unknown> | undefined,
): string {
  const path = operation.path.replace(/\{([^{}]+)\}/g, (_, name: string) =>
    encodeURIComponent(String(params?.[name] ?? "")),
  );
  // The last word, whatever the route table says: never a URL off the API's base path.
  if (!staysUnderBase(settings.baseUrl, path))
    throw new ApiError(
      `${operation.id} is not offered: its route ${operation.path} leaves the API's base path (nothing was sent).`,
      { code: "not_offered", operationId: operation.id },
    );
  return path;
}

/** The query as a string, an array as one parameter per item, absent values left out. */
function queryString(query: Record<string, unknown> | undefined): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {}))
    for (const item of Array.isArray(value) ? value : [value])
      if (item !== undefined && item !== null) search.append(name, String(item));
  return search.toString();
}

/** The body's bytes and type: JSON, or multipart for an operation that takes files. */
function encodeBody(
  operation: Operation,
  body: unknown,
): { bytes: string | Buffer; contentType: string } | undefined {
  if (body === undefined) return undefined;
  if (operation.bodyType === "multipart") return multipartBody(operation.id, body);
  return { bytes: JSON.stringify(body), contentType: "application/json" };
}

/** The headers of one attempt: the prepared call's, with this attempt's bearer. */
export function requestHeaders(
  prepared: PreparedCall,
  bearer: string,
  requestId: string,
  idempotencyKey: string | undefined,
  userAgent: string,
): Record<string, string> {
  return {
    accept: acceptOf(prepared.operation),
    authorization: `Bearer ${bearer}`,
    "x-request-id": requestId,
    "user-agent": userAgent,
    ...(prepared.contentType === undefined ? {} : { "content-type": prepared.contentType }),
    ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
    ...prepared.delegation,
  };
}
