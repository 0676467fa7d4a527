import { randomUUID } from "node:crypto";
import { z } from "zod";
import { component, decimal, pageOf } from "../models/common.js";
import type { Operation } from "../models/operations.js";
import {
  FUND_STATUSES,
  type Fund,
  type FundStatus,
  fundSchema,
  LEGAL_FORMS,
  SPV_STATUSES,
  type Spv,
  type SpvAttachment,
  type SpvStatus,
  spvAttachmentSchema,
  spvSchema,
} from "../models/structures.js";
import { notFound, Problem } from "../problem.js";
import { defineRoute, json } from "../routing.js";
import { assertSirens } from "../siren.js";
import type { SandboxState } from "../state.js";
import { assertReachable, assertTransition, type Transitions } from "../transitions.js";
import { uuid } from "../validation.js";
import { checkLinks } from "./links.js";
import {
  differs,
  externalParams,
  isoAt,
  requireChanges,
  sentFields,
  upserted,
} from "./mutations.js";
import { settleImports } from "./operation-imports.js";
import { assertSpvTakesOperations, touchOperation } from "./operation-writes.js";
import { nameFilter, page, pageQuery, sameName } from "./pagination.js";

/**
 * A fund's life (the sandbox's; the spec shows no fund fields): it invests, then harvests,
 * then closes for good, once none of its SPVs is still active.
 */
export const FUND_MOVES: Transitions<FundStatus, FundStatus> = {
  investing: [],
  harvesting: ["investing"],
  closed: ["harvesting"],
};

/** An SPV is wound up for good: nothing leads back from liquidation. */
export const SPV_MOVES: Transitions<SpvStatus, SpvStatus> = {
  active: [],
  in_liquidation: ["active"],
};

const fundParams = z.strictObject({ fond_id: uuid });
const spvParams = z.strictObject({ spv_id: uuid });
const amount = decimal.refine((v) => !v.startsWith("-"), "must not be negative");

const fundFields = {
  name: z.string().trim().min(1).max(200),
  strategy: z.string().trim().min(1).max(200),
  vintage_year: z.int().min(1990).max(2100),
  target_size: amount,
};

const spvSyncBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  legal_form: z.enum(LEGAL_FORMS),
  siren: z.string().regex(/^\d{9}$/, "must be exactly 9 digits"),
  fond_id: uuid,
  status: z.enum(SPV_STATUSES).optional(),
});

function findFund(state: SandboxState, id: string): Fund {
  const fund = state.data.funds.find((f) => f.id === id.toLowerCase());
  if (!fund) throw notFound("fund", id, "fund_not_found");
  return fund;
}

function findSpv(state: SandboxState, id: string): Spv {
  const spv = state.data.spvs.find((s) => s.id === id.toLowerCase());
  if (!spv) throw notFound("SPV", id, "spv_not_found");
  return spv;
}

function assertFundNameFree(state: SandboxState, name: string, self?: Fund): void {
  const other = state.data.funds.find((f) => f !== self && sameName(f.name, name));
  if (other)
    throw new Problem(409, `Fund ${other.id} is already named ${other.name}.`, {
      reasonCode: "fund_name_taken",
    });
}

function attachment(spv: Spv, operation: Operation): SpvAttachment {
  return {
    spv_id: spv.id,
    operation_id: operation.id,
    operation_name: operation.name,
    operation_status: operation.status,
    relationship_status: operation.relationship_status,
    relationship_label: operation.relationship_label,
    operation_version: operation.version,
  };
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name, "fr");

export const structureRoutes = [
  defineRoute({
    id: "funds_list",
    family: "funds",
    method: "GET",
    path: "/fonds",
    scope: "fonds:read",
    kind: "read",
    summary: "List funds, by vintage",
    query: z.strictObject({
      name: nameFilter.optional(),
      status: z.enum(FUND_STATUSES).optional(),
      ...pageQuery(200, 50),
    }),
    response: { status: 200, schema: component("FundList", pageOf(fundSchema)) },
    handle({ query, state }) {
      const funds = state.data.funds
        .filter(
          (f) =>
            (query.name === undefined || sameName(f.name, query.name)) &&
            (query.status === undefined || f.status === query.status),
        )
        .sort((a, b) => a.vintage_year - b.vintage_year || byName(a, b));
      return json(page(funds, query));
    },
  }),
  defineRoute({
    id: "fund_create",
    family: "funds",
    method: "POST",
    path: "/fonds",
    scope: "fonds:write",
    kind: "write",
    summary: "Create a fund",
    description: "A new fund is `investing`, in EUR (the only currency). Names are unique.",
    body: z.strictObject({ ...fundFields, currency: z.literal("EUR").optional() }),
    response: { status: 201, schema: fundSchema },
    refusals: { 409: ["fund_name_taken"] },
    example: () => ({
      body: {
        name: "Aurore Résidentiel Durable",
        strategy: "Dette senior résidentiel bas carbone",
        vintage_year: 2026,
        target_size: "75000000.00",
      },
    }),
    handle({ body, state, now }) {
      assertFundNameFree(state, body.name);
      const at = isoAt(now());
      const fund: Fund = {
        id: randomUUID(),
        name: body.name,
        strategy: body.strategy,
        vintage_year: body.vintage_year,
        currency: "EUR",
        target_size: body.target_size,
        status: "investing",
        created_at: at,
        updated_at: at,
      };
      state.data.funds.push(fund);
      return json(fund, 201);
    },
  }),
  defineRoute({
    id: "fund_get",
    family: "funds",
    method: "GET",
    path: "/fonds/{fond_id}",
    scope: "fonds:read",
    kind: "read",
    summary: "Get a fund",
    params: fundParams,
    response: { status: 200, schema: fundSchema },
    refusals: { 404: ["fund_not_found"] },
    handle: ({ params, state }) => json(findFund(state, params.fond_id)),
  }),
  defineRoute({
    id: "fund_update",
    family: "funds",
    method: "PATCH",
    path: "/fonds/{fond_id}",
    scope: "fonds:write",
    kind: "write",
    summary: "Change a fund, or move it along its life",
    description:
      "Absent fields are left as they are. `status`: investing → harvesting → closed, one step at a time; a fund closes only once none of its SPVs is active (409 `fund_has_active_spvs`).",
    params: fundParams,
    body: z.strictObject({ ...fundFields, status: z.enum(FUND_STATUSES) }).partial(),
    response: { status: 200, schema: fundSchema },
    refusals: {
      404: ["fund_not_found"],
      409: ["invalid_transition", "fund_name_taken", "fund_has_active_spvs"],
    },
    example: () => ({ body: { strategy: "Dette senior promotion résidentielle" } }),
    handle({ params, body, state, now }) {
      const fund = findFund(state, params.fond_id);
      requireChanges(body);
      if (body.name !== undefined) assertFundNameFree(state, body.name, fund);
      if (body.status !== undefined && body.status !== fund.status) {
        assertTransition(FUND_MOVES, body.status, fund.status, `Fund ${fund.id}`);
        const active = state.data.spvs.filter(
          (s) => s.fond_id === fund.id && s.status === "active",
        );
        if (body.status === "closed" && active.length > 0) {
          throw new Problem(
            409,
            `Fund ${fund.id} still has ${active.length} active SPV(s) (${active.map((s) => s.name).join(", ")}): liquidate them first.`,
            { reasonCode: "fund_has_active_spvs" },
          );
        }
      }
      Object.assign(fund, sentFields(body), { updated_at: isoAt(now()) });
      return json(fund);
    },
  }),
  defineRoute({
    id: "fund_spvs_list",
    family: "funds",
    method: "GET",
    path: "/fonds/{fond_id}/spvs",
    scope: "fonds:read",
    kind: "read",
    summary: "List a fund's SPVs",
    params: fundParams,
    query: z.strictObject(pageQuery(200, 50)),
    response: { status: 200, schema: component("FundSpvList", pageOf(spvSchema)) },
    refusals: { 404: ["fund_not_found"] },
    handle({ params, query, state }) {
      const fund = findFund(state, params.fond_id);
      return json(page(state.data.spvs.filter((s) => s.fond_id === fund.id).sort(byName), query));
    },
  }),
  defineRoute({
    id: "spvs_list",
    family: "funds",
    method: "GET",
    path: "/spvs",
    scope: "spvs:read",
    kind: "read",
    summary: "List SPVs",
    response: { status: 200, schema: component("SpvList", pageOf(spvSchema)) },
    query: z.strictObject({ name: nameFilter.optional() }),
    handle({ query, state }) {
      const spvs = state.data.spvs
        .filter((s) => query.name === undefined || sameName(s.name, query.name))
        .sort(byName);
      return json({ items: spvs, total: spvs.length });
    },
  }),
  defineRoute({
    id: "spv_get",
    family: "funds",
    method: "GET",
    path: "/spvs/{spv_id}",
    scope: "spvs:read",
    kind: "read",
    summary: "Get an SPV",
    params: spvParams,
    response: { status: 200, schema: spvSchema },
    refusals: { 404: ["spv_not_found"] },
    handle: ({ params, state }) => json(findSpv(state, params.spv_id)),
  }),
  defineRoute({
    id: "spv_attachments_list",
    family: "funds",
    method: "GET",
    path: "/spvs/{spv_id}/attachments",
    scope: "spvs:read",
    kind: "read",
    summary: "List the operations attached to an SPV",
    params: spvParams,
    query: z.strictObject(pageQuery(200, 50)),
    response: {
      status: 200,
      schema: component("SpvAttachmentList", pageOf(spvAttachmentSchema)),
    },
    refusals: { 404: ["spv_not_found"] },
    handle({ params, query, state, now }) {
      settleImports(state, now());
      const spv = findSpv(state, params.spv_id);
      const attached = state.data.operations.filter((o) => o.spv_id === spv.id).sort(byName);
      return json(
        page(
          attached.map((o) => attachment(spv, o)),
          query,
        ),
      );
    },
  }),
  defineRoute({
    id: "spv_attachment_create",
    family: "funds",
    method: "POST",
    path: "/spvs/{spv_id}/attachments",
    scope: "spvs:write",
    kind: "write",
    summary: "Attach an operation to an SPV",
    description:
      "The operation must have no SPV yet (409 `attached_to_another_spv`, or `already_attached` here); an SPV in liquidation takes no new operation. The operation's `spv_id` and `fond_id` follow, and its `version` goes up.",
    params: spvParams,
    body: z.strictObject({ operation_id: uuid }),
    response: { status: 201, schema: spvAttachmentSchema },
    refusals: {
      404: ["spv_not_found"],
      409: ["already_attached", "attached_to_another_spv", "spv_in_liquidation"],
      422: ["reference_not_found"],
    },
    example: ({ state }) => {
      const spv = state.data.spvs.find((s) => s.status === "active");
      const free = state.data.operations.find((o) => o.spv_id === null);
      return spv && free ? { params: { spv_id: spv.id }, body: { operation_id: free.id } } : {};
    },
    handle({ params, body, state, now }) {
      settleImports(state, now());
      const spv = findSpv(state, params.spv_id);
      checkLinks(state, body);
      const operation = state.operation(body.operation_id);
      if (operation.spv_id === spv.id)
        throw new Problem(409, `Operation ${operation.id} is already attached to this SPV.`, {
          reasonCode: "already_attached",
        });
      if (operation.spv_id !== null)
        throw new Problem(
          409,
          `Operation ${operation.id} is attached to SPV ${operation.spv_id}: detach it there first.`,
          { reasonCode: "attached_to_another_spv" },
        );
      assertSpvTakesOperations(spv);
      Object.assign(operation, { spv_id: spv.id, fond_id: spv.fond_id });
      touchOperation(operation, now());
      return json(attachment(spv, operation), 201);
    },
  }),
  defineRoute({
    id: "spv_attachment_delete",
    family: "funds",
    method: "DELETE",
    path: "/spvs/{spv_id}/attachments/{operation_id}",
    scope: "spvs:write",
    kind: "write",
    summary: "Detach an operation from an SPV",
    description: "The operation keeps no SPV and no fund; its `version` goes up.",
    params: z.strictObject({ spv_id: uuid, operation_id: uuid }),
    response: { status: 204 },
    refusals: { 404: ["spv_not_found", "attachment_not_found"] },
    handle({ params, state, now }) {
      settleImports(state, now());
      const spv = findSpv(state, params.spv_id);
      const operation = state.data.operations.find(
        (o) => o.id === params.operation_id.toLowerCase() && o.spv_id === spv.id,
      );
      if (!operation)
        throw notFound(
          "operation attached to this SPV",
          params.operation_id,
          "attachment_not_found",
        );
      Object.assign(operation, { spv_id: null, fond_id: null });
      touchOperation(operation, now());
      return { status: 204 };
    },
  }),
  defineRoute({
    id: "spv_get_by_external",
    family: "funds",
    method: "GET",
    path: "/spvs/external/{external_id}",
    scope: "spvs:read",
    kind: "read",
    summary: "Get an SPV by its external id",
    params: externalParams,
    response: { status: 200, schema: spvSchema },
    refusals: { 404: ["spv_not_found"] },
    handle({ params, state }) {
      const spv = state.data.spvs.find((s) => s.external_id === params.external_id);
      if (!spv) throw notFound("SPV", `external ${params.external_id}`, "spv_not_found");
      return json(spv);
    },
  }),
  defineRoute({
    id: "spv_sync",
    family: "funds",
    method: "PUT",
    path: "/spvs/external/{external_id}",
    scope: "spvs:write",
    kind: "write",
    summary: "Create or update an SPV by its external id",
    description:
      "An upsert: 201 with the new SPV when the external id is unknown, 200 when it is known (the SPV is updated, or left as it is when nothing differs). The SIREN's check digit is verified and unique among SPVs; the fund must exist and not be closed; a liquidation is never undone.",
    params: externalParams,
    body: spvSyncBody,
    response: { status: 200, schema: spvSchema, created: 201 },
    refusals: {
      409: ["invalid_transition", "siren_taken", "fund_closed"],
      422: ["siren_invalid", "reference_not_found"],
    },
    example: ({ state }) => {
      const spv = state.data.spvs.find((s) => s.status === "active");
      if (!spv) return {};
      const { name, legal_form, siren, fond_id } = spv;
      return {
        params: { external_id: spv.external_id },
        body: { name, legal_form, siren, fond_id },
      };
    },
    handle({ params, body, state, now }) {
      settleImports(state, now());
      assertSirens({ siren: body.siren });
      checkLinks(state, body);
      const current = state.data.spvs.find((s) => s.external_id === params.external_id);
      const twin = state.data.spvs.find((s) => s !== current && s.siren === body.siren);
      if (twin)
        throw new Problem(409, `SIREN ${body.siren} is already SPV ${twin.id}'s.`, {
          reasonCode: "siren_taken",
        });
      const fund = findFund(state, body.fond_id);
      if (fund.status === "closed" && fund.id !== current?.fond_id)
        throw new Problem(409, `Fund ${fund.id} is closed: it takes no new SPV.`, {
          reasonCode: "fund_closed",
        });
      const at = isoAt(now());
      const fields = { ...body, fond_id: fund.id };
      if (!current) {
        const spv: Spv = {
          id: randomUUID(),
          ...fields,
          status: body.status ?? "active",
          external_id: params.external_id,
          created_at: at,
          updated_at: at,
        };
        state.data.spvs.push(spv);
        return upserted(spv, true);
      }
      const status = body.status ?? current.status;
      assertReachable(SPV_MOVES, current.status, status, `SPV ${current.id}`);
      const next: Spv = { ...current, ...fields, status };
      if (!differs(next, current, ["updated_at"])) return upserted(current, false);
      if (next.fond_id !== current.fond_id) {
        // An operation's fund is its SPV's: the attached operations move with it.
        for (const operation of state.data.operations.filter((o) => o.spv_id === current.id)) {
          operation.fond_id = next.fond_id;
          touchOperation(operation, now());
        }
      }
      Object.assign(current, next, { updated_at: at });
      return upserted(current, false);
    },
  }),
];
