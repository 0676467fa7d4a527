import { z } from "zod";
import type { ContractOperation } from "./contract/types.js";
import {
  ALERT_STATUSES,
  alertComment,
  businessDate,
  commaList,
  DEAL_STATUSES,
  dashboardBody,
  exactName,
  limit,
  noteBody,
  offset,
  operationStatus,
  recommendationId,
  SEARCH_TYPES,
  SEVERITIES,
  savedViewCreateBody,
  savedViewUpdateBody,
  siren,
  TIMELINE_TYPES,
  uuid,
} from "./schemas.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * One Partner API operation, declared once as data. Read or write is stated, never derived
 * from the method (spec part 1: the preview POST is a read). `capability` marks the delegated
 * `/users/me*` family (spec part 5).
 */
export interface OperationSpec {
  method: HttpMethod;
  /** Relative to the base URL; placeholders in braces. Overridable by PORTFOLIO_ROUTES_FILE. */
  path: string;
  scope: string;
  kind: "read" | "write";
  capability: string | null;
  params: z.ZodObject | null;
  query: z.ZodType | null;
  body: z.ZodType | null;
  /** JSON, a workbook checked as one, or any file the contract lists (bytes and their type). */
  response: "json" | "xlsx" | "binary";
}

type Defaults = { capability: null; params: null; query: null; body: null; response: "json" };
type Declared = Omit<OperationSpec, keyof Defaults> & Partial<OperationSpec>;

/** An operation with the fields it leaves out at their defaults, its own fields' types kept. */
const op = <const S extends Declared>(spec: S): Omit<Defaults, keyof S> & S => ({
  capability: null,
  params: null,
  query: null,
  body: null,
  response: "json",
  ...spec,
});

/** The contract export also bounds offset (the spec shows only its minimum). */
const OFFSET_MAX = 1_000_000;

const paged = (max: number, fallback: number, offsetMax?: number) => ({
  limit: limit(max, fallback).optional(),
  offset: (offsetMax === undefined ? offset : offset.max(offsetMax)).optional(),
});

const alertParams = z.strictObject({ alert_id: uuid });
/** Acknowledge, resolve and false positive: an optional body, an optional comment. */
const alertMove = (path: string) =>
  op({
    method: "POST",
    path: `/alerts/{alert_id}/${path}`,
    scope: "alerts:write",
    kind: "write",
    params: alertParams,
    body: z.strictObject({ comment: alertComment.optional() }).optional(),
  });

export const CATALOGUE = {
  portfolio_get: op({ method: "GET", path: "/portfolio", scope: "portfolio:read", kind: "read" }),
  operations_list: op({
    method: "GET",
    path: "/operations",
    scope: "operations:read",
    kind: "read",
    query: z.strictObject({
      name: exactName.optional(),
      status: operationStatus.optional(),
      spv_id: uuid.optional(),
      ...paged(200, 50),
    }),
  }),
  operation_get: op({
    method: "GET",
    path: "/operations/{operation_id}",
    scope: "operations:read",
    kind: "read",
    params: z.strictObject({ operation_id: uuid }),
  }),
  operation_notes_list: op({
    method: "GET",
    path: "/operations/{operation_id}/notes",
    scope: "operations:read",
    kind: "read",
    params: z.strictObject({ operation_id: uuid }),
    query: z.strictObject(paged(200, 20)),
  }),
  operation_note_create: op({
    method: "POST",
    path: "/operations/{operation_id}/notes",
    scope: "operations:write",
    kind: "write",
    params: z.strictObject({ operation_id: uuid }),
    body: noteBody,
  }),
  deals_list: op({
    method: "GET",
    path: "/deals",
    scope: "deals:read",
    kind: "read",
    query: z.strictObject({ status: z.enum(DEAL_STATUSES).optional(), ...paged(200, 50) }),
  }),
  deal_get: op({
    method: "GET",
    path: "/deals/{deal_id}",
    scope: "deals:read",
    kind: "read",
    params: z.strictObject({ deal_id: uuid }),
  }),
  spvs_list: op({
    method: "GET",
    path: "/spvs",
    scope: "spvs:read",
    kind: "read",
    query: z.strictObject({ name: exactName.optional() }),
  }),
  operators_list: op({
    method: "GET",
    path: "/operateurs",
    scope: "operateurs:read",
    kind: "read",
    query: z
      .strictObject({
        name: exactName.optional(),
        search: z.string().min(1).max(255).describe("Part of a name.").optional(),
        ...paged(200, 50),
      })
      .refine((q) => q.name === undefined || q.search === undefined, {
        path: ["search"],
        message: "cannot be combined with name (the API takes one or the other)",
      }),
  }),
  operator_get: op({
    method: "GET",
    path: "/operateurs/{operateur_id}",
    scope: "operateurs:read",
    kind: "read",
    params: z.strictObject({ operateur_id: uuid }),
  }),
  taxonomies_get: op({
    method: "GET",
    path: "/taxonomies",
    scope: "taxonomies:read",
    kind: "read",
  }),
  field_definitions_list: op({
    method: "GET",
    path: "/field-definitions",
    scope: "taxonomies:read",
    kind: "read",
  }),
  field_definition_get: op({
    method: "GET",
    path: "/field-definitions/by-key/{field_key}",
    scope: "taxonomies:read",
    kind: "read",
    params: z.strictObject({
      // Keys are snake_case in every example the spec gives (crd_total, service_dette).
      field_key: z
        .string()
        .regex(/^[a-z][a-z0-9_]{0,63}$/, "must be a snake_case field key (a-z, 0-9, _; 1-64)"),
    }),
  }),
  siren_get: op({
    method: "GET",
    path: "/enrichment/siren/{siren}",
    scope: "operateurs:read",
    kind: "read",
    params: z.strictObject({ siren }),
  }),
  siren_validate: op({
    method: "GET",
    path: "/enrichment/siren/{siren}/validate",
    scope: "operateurs:read",
    kind: "read",
    params: z.strictObject({ siren: z.string().min(1).max(32) }),
  }),
  siren_resolve: op({
    method: "POST",
    path: "/enrichment/siren/{siren}/resolve",
    scope: "operateurs:write",
    kind: "write",
    params: z.strictObject({ siren }),
  }),
  calendar_list: op({
    method: "GET",
    path: "/calendar/events",
    scope: "calendar:read",
    kind: "read",
    query: z.strictObject(paged(200, 20)),
  }),
  notifications_unread_count: op({
    method: "GET",
    path: "/notifications/unread-count",
    scope: "notifications:read",
    kind: "read",
  }),
  reports_inrev: op({
    method: "GET",
    path: "/reports/inrev",
    scope: "reporting:read",
    kind: "read",
    response: "xlsx",
  }),
  workflow_recommendations_preview: op({
    method: "POST",
    path: "/workflows/recommendations/preview",
    scope: "workflows:read",
    kind: "read",
    body: z
      .strictObject({
        operation_ids: z.array(uuid).max(50).optional(),
        preset_keys: z.array(z.string().min(1).max(80)).max(20).optional(),
        include_applied: z.boolean().optional(),
        limit: z.int().min(1).max(50).optional(),
      })
      .optional(),
  }),
  workflow_create_from_recommendation: op({
    method: "POST",
    path: "/workflows/recommendations/{recommendation_id}/workflow",
    scope: "workflows:write",
    kind: "write",
    params: z.strictObject({ recommendation_id: recommendationId }),
    body: z
      .strictObject({
        name: z.string().min(1).max(200).optional(),
        enabled: z.boolean().optional(),
      })
      .optional(),
  }),
  operation_timeline: op({
    method: "GET",
    path: "/operations/{operation_id}/timeline",
    scope: "timeline:read",
    kind: "read",
    params: z.strictObject({ operation_id: uuid }),
    query: z.strictObject({
      types: commaList(TIMELINE_TYPES).optional(),
      since: businessDate.optional(),
      until: businessDate.optional(),
      ...paged(200, 50, OFFSET_MAX),
    }),
  }),
  operation_narrative: op({
    method: "GET",
    path: "/operations/{operation_id}/timeline/narrative",
    scope: "timeline:read",
    kind: "read",
    params: z.strictObject({ operation_id: uuid }),
    query: z.strictObject({ days: z.int().min(7).max(365).optional() }),
  }),
  search: op({
    method: "GET",
    path: "/search",
    scope: "search:read",
    kind: "read",
    query: z.strictObject({
      q: z.string().min(2).max(200),
      types: commaList(SEARCH_TYPES).optional(),
      ...paged(50, 20, OFFSET_MAX),
    }),
  }),
  alerts_list: op({
    method: "GET",
    path: "/alerts",
    scope: "alerts:read",
    kind: "read",
    query: z.strictObject({
      status: z.enum(ALERT_STATUSES).optional(),
      severity: z.enum(SEVERITIES).optional(),
      alert_type: z.string().min(1).max(50).optional(),
      operation_id: uuid.optional(),
      ...paged(200, 50, OFFSET_MAX),
    }),
  }),
  alert_get: op({
    method: "GET",
    path: "/alerts/{alert_id}",
    scope: "alerts:read",
    kind: "read",
    params: alertParams,
  }),
  alert_acknowledge: alertMove("acknowledge"),
  alert_resolve: alertMove("resolve"),
  alert_postpone: op({
    method: "POST",
    path: "/alerts/{alert_id}/postpone",
    scope: "alerts:write",
    kind: "write",
    params: alertParams,
    body: z.strictObject({ until: businessDate, comment: alertComment.optional() }),
  }),
  alert_false_positive: alertMove("false-positive"),
  me_get: op({
    method: "GET",
    path: "/users/me",
    scope: "users:read",
    kind: "read",
    capability: "user_self_service",
  }),
  saved_views_list: op({
    method: "GET",
    path: "/users/me/saved-views",
    scope: "users:read",
    kind: "read",
    capability: "saved_views",
  }),
  saved_view_create: op({
    method: "POST",
    path: "/users/me/saved-views",
    scope: "users:write",
    kind: "write",
    capability: "saved_views",
    body: savedViewCreateBody,
  }),
  saved_view_update: op({
    method: "PATCH",
    path: "/users/me/saved-views/{view_id}",
    scope: "users:write",
    kind: "write",
    capability: "saved_views",
    params: z.strictObject({ view_id: uuid }),
    body: savedViewUpdateBody,
  }),
  custom_dashboards_list: op({
    method: "GET",
    path: "/users/me/custom-dashboards",
    scope: "users:read",
    kind: "read",
    capability: "custom_dashboards",
  }),
  custom_dashboard_create: op({
    method: "POST",
    path: "/users/me/custom-dashboards",
    scope: "users:write",
    kind: "write",
    capability: "custom_dashboards",
    body: dashboardBody,
  }),
} satisfies Record<string, OperationSpec>;

export type Catalogue = typeof CATALOGUE;

/** Every write of the catalogue: what a confirmation may end up sending. */
export const WRITE_OPERATIONS = (Object.keys(CATALOGUE) as Array<keyof typeof CATALOGUE>).filter(
  (id) => CATALOGUE[id].kind === "write",
);
export type OperationId = keyof Catalogue;

/**
 * An operation as the server calls it: a curated entry of the catalogue (hand-made schemas),
 * or one known only from the key's contract (validators built from its JSON Schemas on first
 * use). Either way the contract, when one is loaded, gave it its method and path.
 */
export interface Operation extends OperationSpec {
  id: string;
  /** The contract's tag, or the scope's family without a contract. */
  family: string;
  summary: string;
  bodyType: "json" | "multipart";
  /** Its description in the key's contract, when one is loaded. */
  contract: ContractOperation | null;
  /** Declared in the catalogue above, with hand-made schemas and presentation. */
  curated: boolean;
}

export const isCurated = (id: string): id is OperationId => Object.hasOwn(CATALOGUE, id);

type Input<S> = S extends z.ZodType ? z.input<S> : never;
type Field<Name extends string, S> = [S] extends [null]
  ? { [K in Name]?: undefined }
  : undefined extends Input<S>
    ? { [K in Name]?: Input<S> }
    : Partial<Input<S>> extends Input<S>
      ? { [K in Name]?: Input<S> }
      : { [K in Name]: Input<S> };

/** What `api.call(id, input)` takes for an operation: its path parameters, query and body. */
export type OperationInput<Id extends OperationId> = Field<"path", Catalogue[Id]["params"]> &
  Field<"query", Catalogue[Id]["query"]> &
  Field<"body", Catalogue[Id]["body"]>;

/** The placeholders of a path template, in order. */
export function placeholders(path: string): string[] {
  return [...path.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1] ?? "");
}
