import type { z } from "zod";
import type { ContractOperation, HttpMethod } from "./contract/table.js";
import type { SandboxKey } from "./keys.js";
import type { User } from "./models/users.js";
import type { SandboxState } from "./state.js";

export type Method = HttpMethod;

/** A file received in a multipart/form-data body. */
export interface UploadedFile {
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The uploaded file on multipart routes, else null. */
  file: UploadedFile | null;
  state: SandboxState;
  key: SandboxKey;
  /** The delegated user on `/users/me*` routes, else null. */
  user: User | null;
  now: () => number;
}

export interface RouteResult {
  status: number;
  json?: unknown;
  bytes?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * What an operation answers on success: a JSON model, a file (of one content type, or of one
 * of several, as a document's download), or nothing.
 */
export type RouteResponse =
  | { status: 200 | 201 | 202; schema: z.ZodType }
  /** An upsert (PUT by external id): 200 when it changed a record, 201 when it created one. */
  | { status: 200; schema: z.ZodType; created: 201 }
  | { status: 200; binary: string | readonly string[] }
  | { status: 204 };

/** Statuses a route may refuse with beyond the pipeline's own, and their reason codes. */
export type Refusals = Partial<Record<400 | 403 | 404 | 409 | 410 | 413 | 422, readonly string[]>>;

/** A multipart/form-data body: its text fields go through `body`, its one file arrives apart. */
export interface UploadSpec {
  /** The form field that carries the file. */
  file: string;
  /** Cap on the whole request body, in bytes (413 over it); the sandbox's option by default. */
  maxBytes?: number;
}

/** Everything the per-key export says about one operation (the token exchange included). */
export interface OperationMeta extends ContractOperation {
  summary: string;
  description?: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  upload?: UploadSpec;
  response: RouteResponse;
  refusals?: Refusals;
}

/** What the contract test may need beyond the schema to build a request that succeeds. */
export interface RouteExample {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
}

export interface ExampleContext {
  state: SandboxState;
  /** The sandbox's business date, YYYY-MM-DD. */
  today: string;
}

export interface RouteDef extends OperationMeta {
  scope: string;
  kind: "read" | "write";
  /**
   * Picks seeded records (or a body) for the contract test, where the generic walk cannot:
   * a record in the right state, a body whose rules go beyond its schema.
   */
  example?: (ctx: ExampleContext) => RouteExample;
  handle(ctx: RouteContext<unknown, unknown, unknown>): RouteResult | Promise<RouteResult>;
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** Declares a route with its handler typed by its own schemas. */
export function defineRoute<
  PS extends z.ZodType | undefined = undefined,
  QS extends z.ZodType | undefined = undefined,
  BS extends z.ZodType | undefined = undefined,
>(
  def: Omit<RouteDef, "params" | "query" | "body" | "handle"> & {
    params?: PS;
    query?: QS;
    body?: BS;
    handle(ctx: RouteContext<Out<PS>, Out<QS>, Out<BS>>): RouteResult | Promise<RouteResult>;
  },
): RouteDef {
  return def as RouteDef;
}

export const json = (body: unknown, status = 200): RouteResult => ({ status, json: body });

export interface RouteMatch {
  route: RouteDef;
  params: Record<string, string>;
}

type Segment = { literal: string } | { param: string };

interface CompiledRoute {
  route: RouteDef;
  segments: Segment[];
}

/**
 * Matches raw paths segment by segment. Nothing is normalised: `..` or an encoded slash stays
 * inside its segment, so it can only fail a parameter's validation, never reach another route.
 * Where several routes match, literal segments win over parameters from the left, whatever
 * the declaration order: `/users/me` is never `/users/{user_id}` with `user_id = me`.
 */
export class Router {
  private readonly compiled: CompiledRoute[];

  constructor(routes: readonly RouteDef[]) {
    this.compiled = routes.map((route) => ({ route, segments: compile(route.path) }));
    const seen = new Map<string, string>();
    for (const { route, segments } of this.compiled) {
      const shape = `${route.method} ${segments.map((s) => ("literal" in s ? s.literal : "{}")).join("/")}`;
      const other = seen.get(shape);
      if (other) throw new Error(`routes ${other} and ${route.id} both answer ${shape}`);
      seen.set(shape, route.id);
    }
  }

  /** The route for this method and path; `allowed` lists the methods when only the path matched. */
  match(method: string, path: string): { match: RouteMatch | null; allowed: Method[] } {
    const parts = path.split("/").slice(1);
    const allowed = new Set<Method>();
    let best: (RouteMatch & { segments: Segment[] }) | null = null;
    for (const { route, segments } of this.compiled) {
      const params = matchSegments(segments, parts);
      if (!params) continue;
      if (route.method !== method) allowed.add(route.method);
      else if (!best || moreSpecific(segments, best.segments)) best = { route, params, segments };
    }
    if (best) return { match: { route: best.route, params: best.params }, allowed: [] };
    return { match: null, allowed: [...allowed] };
  }
}

function compile(path: string): Segment[] {
  return path
    .split("/")
    .slice(1)
    .map((s) =>
      s.startsWith("{") && s.endsWith("}") ? { param: s.slice(1, -1) } : { literal: s },
    );
}

/** The first position where one is literal and the other a parameter decides. */
function moreSpecific(a: Segment[], b: Segment[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const aLiteral = "literal" in (a[i] ?? {});
    const bLiteral = "literal" in (b[i] ?? {});
    if (aLiteral !== bLiteral) return aLiteral;
  }
  return false;
}

function matchSegments(segments: Segment[], parts: string[]): Record<string, string> | null {
  if (segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const part = parts[i] ?? "";
    if (!segment) return null;
    if ("literal" in segment) {
      if (segment.literal !== part) return null;
    } else {
      if (part === "") return null;
      params[segment.param] = safeDecode(part);
    }
  }
  return params;
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part; // malformed escapes stay raw and fail the parameter's validation
  }
}
