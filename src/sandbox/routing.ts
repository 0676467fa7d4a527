import type { z } from "zod";
import type { SandboxKey } from "./keys.js";
import type { User } from "./model.js";
import type { SandboxState } from "./state.js";

export type Method = "GET" | "POST" | "PATCH";

export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
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

export interface RouteDef {
  id: string;
  method: Method;
  /** Relative to the base address (`/v1`), placeholders in braces. */
  path: string;
  scope: string;
  kind: "read" | "write";
  /** Delegated capability: set on `/users/me*` routes only. */
  capability?: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
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

interface CompiledRoute {
  route: RouteDef;
  segments: Array<{ literal: string } | { param: string }>;
}

/**
 * Matches raw paths segment by segment. Nothing is normalised: `..` or an encoded slash stays
 * inside its segment, so it can only fail a parameter's validation, never reach another route.
 */
export class Router {
  private readonly compiled: CompiledRoute[];

  constructor(routes: readonly RouteDef[]) {
    this.compiled = routes.map((route) => ({
      route,
      segments: route.path
        .split("/")
        .slice(1)
        .map((s) =>
          s.startsWith("{") && s.endsWith("}") ? { param: s.slice(1, -1) } : { literal: s },
        ),
    }));
  }

  /** The route for this method and path; `allowed` lists the methods when only the path matched. */
  match(method: string, path: string): { match: RouteMatch | null; allowed: Method[] } {
    const parts = path.split("/").slice(1);
    const allowed: Method[] = [];
    for (const { route, segments } of this.compiled) {
      const params = matchSegments(segments, parts);
      if (!params) continue;
      if (route.method === method) return { match: { route, params }, allowed: [] };
      allowed.push(route.method);
    }
    return { match: null, allowed };
  }
}

function matchSegments(
  segments: CompiledRoute["segments"],
  parts: string[],
): Record<string, string> | null {
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
