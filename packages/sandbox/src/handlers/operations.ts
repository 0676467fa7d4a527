import { z } from "zod";
import { ACTIVE_OPERATION_STATUSES } from "../data/taxonomies.js";
import { serviceAccount } from "../keys.js";
import { component, pageOf } from "../models/common.js";
import { type Operation, operationListItemSchema, operationSchema } from "../models/operations.js";
import { invalid } from "../problem.js";
import { defineRoute, type ExampleContext, json } from "../routing.js";
import { uuid } from "../validation.js";
import { externalParams, isoAt, upserted } from "./mutations.js";
import { settleImports } from "./operation-imports.js";
import {
  commitOperation,
  findByExternalId,
  operationByExternalId,
  operationCreateBody,
  operationSyncBody,
  operationUpdateBody,
  prepareOperation,
} from "./operation-writes.js";
import { nameFilter, page, pageQuery, sameName } from "./pagination.js";

const operationParams = z.strictObject({ operation_id: uuid });

/** What every write of an operation may refuse, beyond the pipeline's own refusals. */
const WRITE_REFUSALS = {
  409: ["operation_name_taken", "spv_in_liquidation"],
  422: [
    "reference_not_found",
    "unknown_taxonomy_code",
    "unknown_business_field",
    "business_field_unavailable",
    "kpi_key_in_data",
    "kpi_inconsistent",
    "amounts_inconsistent",
  ],
} as const;

/** For the contract test: the first operation by name that a source system synchronises. */
function syncedOperation({ state }: ExampleContext): Operation | undefined {
  return state.data.operations
    .filter((o) => o.external_id !== null)
    .sort((a, b) => a.name.localeCompare(b.name, "fr"))[0];
}

/** The list item of spec part 2: detail-only fields (data, kpi_snapshot, ...) stay out. */
export function operationListItem(o: Operation) {
  const {
    description: _d,
    operateur_id: _o,
    fond_id: _f,
    data: _data,
    kpi_snapshot: _k,
    external_id: _x,
    ...item
  } = o;
  return item;
}

export const operationRoutes = [
  defineRoute({
    id: "operations_list",
    family: "operations",
    method: "GET",
    path: "/operations",
    scope: "operations:read",
    kind: "read",
    summary: "List operations",
    description:
      "`status=active` stands for sourcing, instruction, travaux, commercialisation, livraison.",
    response: { status: 200, schema: component("OperationList", pageOf(operationListItemSchema)) },
    query: z.strictObject({
      name: nameFilter.optional(),
      status: z.string().max(180).optional(),
      spv_id: uuid.optional(),
      ...pageQuery(200, 50),
    }),
    handle({ query, state, now }) {
      settleImports(state, now());
      const codes =
        state.data.taxonomies
          .find((d) => d.dimension === "operation_status")
          ?.values.map((v) => v.code) ?? [];
      let statuses: readonly string[] | null = null;
      if (query.status !== undefined) {
        if (query.status === "active") statuses = ACTIVE_OPERATION_STATUSES;
        else if (codes.includes(query.status)) statuses = [query.status];
        else {
          throw invalid([
            {
              field: "status",
              rule: `one of active, ${codes.join(", ")}`,
              message: `must be an operation_status taxonomy code or active, got ${JSON.stringify(query.status)}`,
            },
          ]);
        }
      }
      const items = state.data.operations
        .filter(
          (o) =>
            (query.name === undefined || sameName(o.name, query.name)) &&
            (statuses === null || statuses.includes(o.status)) &&
            (query.spv_id === undefined || o.spv_id?.toLowerCase() === query.spv_id.toLowerCase()),
        )
        .sort((a, b) => a.name.localeCompare(b.name, "fr"))
        .map(operationListItem);
      return json(page(items, query));
    },
  }),
  defineRoute({
    id: "operation_get",
    family: "operations",
    method: "GET",
    path: "/operations/{operation_id}",
    scope: "operations:read",
    kind: "read",
    summary: "Get an operation with its KPI snapshot",
    response: { status: 200, schema: operationSchema },
    refusals: { 404: ["operation_not_found"] },
    params: operationParams,
    handle({ params, state, now }) {
      settleImports(state, now());
      return json(state.operation(params.operation_id));
    },
  }),
  defineRoute({
    id: "operation_create",
    family: "operations",
    method: "POST",
    path: "/operations",
    scope: "operations:write",
    kind: "write",
    summary: "Create an operation",
    description:
      "Starts at version 1, in any `operation_status` (default `sourcing`: an existing operation may be brought in where it stands). Coded fields take taxonomy codes; `data` keys follow the field definitions; KPIs go inside `kpi_snapshot`, never in `data`; the fund follows the SPV. `encours` is computed.",
    body: operationCreateBody,
    response: { status: 201, schema: operationSchema },
    refusals: { ...WRITE_REFUSALS, 409: [...WRITE_REFUSALS[409], "external_id_taken"] },
    example: () => ({
      body: {
        name: "Les Jardins de l'Écluse – Annecy",
        status: "instruction",
        classe_actif: "residentiel",
        type_investissement: "dette_senior",
        data: { nombre_lots: 42, ville: "Annecy", code_postal: "74000" },
        kpi_snapshot: {
          as_of: "2026-09-30",
          periode: "12 mois glissants",
          valeur_venale: "9800000.00",
        },
      },
    }),
    handle({ key, body, state, now }) {
      settleImports(state, now());
      const { external_id: externalId, ...fields } = body;
      const write = prepareOperation(state, null, fields, "create", {
        at: isoAt(now()),
        externalId: externalId ?? null,
      });
      return json(commitOperation(state, write, now(), serviceAccount(key)), 201);
    },
  }),
  defineRoute({
    id: "operation_update",
    family: "operations",
    method: "PATCH",
    path: "/operations/{operation_id}",
    scope: "operations:write",
    kind: "write",
    summary: "Change an operation, at the version last read",
    description:
      "`version` is the version the change was made on: any other is refused (409 `version_conflict`); a change raises it by one. Absent fields are left as they are, null clears; `data` and `kpi_snapshot` are merged key by key (null removes a `data` key). A `status` change is one move of the lifecycle (409 `invalid_transition`).",
    params: operationParams,
    body: operationUpdateBody,
    response: { status: 200, schema: operationSchema },
    refusals: {
      ...WRITE_REFUSALS,
      404: ["operation_not_found"],
      409: [...WRITE_REFUSALS[409], "version_conflict", "invalid_transition"],
    },
    example: (ctx) => {
      const first = [...ctx.state.data.operations].sort((a, b) =>
        a.name.localeCompare(b.name, "fr"),
      )[0];
      return first
        ? {
            params: { operation_id: first.id },
            body: {
              version: first.version,
              description: `${first.description ?? first.name} Point d'étape mis à jour.`,
            },
          }
        : {};
    },
    handle({ key, params, body, state, now }) {
      settleImports(state, now());
      const operation = state.operation(params.operation_id);
      const write = prepareOperation(state, operation, body, "update", { at: isoAt(now()) });
      return json(commitOperation(state, write, now(), serviceAccount(key)));
    },
  }),
  defineRoute({
    id: "operation_get_by_external",
    family: "operations",
    method: "GET",
    path: "/operations/external/{external_id}",
    scope: "operations:read",
    kind: "read",
    summary: "Get an operation by its external id",
    params: externalParams,
    response: { status: 200, schema: operationSchema },
    refusals: { 404: ["operation_not_found"] },
    example: (ctx) => {
      const operation = syncedOperation(ctx);
      return operation?.external_id ? { params: { external_id: operation.external_id } } : {};
    },
    handle({ params, state, now }) {
      settleImports(state, now());
      return json(operationByExternalId(state, params.external_id));
    },
  }),
  defineRoute({
    id: "operation_sync",
    family: "operations",
    method: "PUT",
    path: "/operations/external/{external_id}",
    scope: "operations:write",
    kind: "write",
    summary: "Create or update an operation by its external id",
    description:
      "An upsert: 201 with the new operation when the external id is unknown, 200 when it is known (updated, or left as it is, version unchanged, when nothing differs). Absent fields are left as they are. A known operation's status may change to any status a chain of allowed moves leads to, several steps at once, and to no other (409 `invalid_transition`: back from travaux, out of cloturee or abandonnee); `version`, if sent, must be the current one.",
    params: externalParams,
    body: operationSyncBody,
    response: { status: 200, schema: operationSchema, created: 201 },
    refusals: {
      ...WRITE_REFUSALS,
      409: [...WRITE_REFUSALS[409], "version_conflict", "invalid_transition"],
    },
    example: (ctx) => {
      const operation = syncedOperation(ctx);
      return operation?.external_id
        ? { params: { external_id: operation.external_id }, body: { name: operation.name } }
        : {};
    },
    handle({ key, params, body, state, now }) {
      settleImports(state, now());
      const current = findByExternalId(state, params.external_id) ?? null;
      const write = prepareOperation(state, current, body, current ? "sync" : "create", {
        at: isoAt(now()),
        externalId: params.external_id,
      });
      return upserted(commitOperation(state, write, now(), serviceAccount(key)), current === null);
    },
  }),
];
