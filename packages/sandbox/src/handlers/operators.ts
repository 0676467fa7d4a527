import { randomUUID } from "node:crypto";
import { z } from "zod";
import { OPEN_RISK_STATUSES, RISK_RANK } from "../data/operators.js";
import { serviceAccount } from "../keys.js";
import { component, date, jsonObject, pageOf } from "../models/common.js";
import {
  OPERATOR_TYPES,
  type Operator,
  operatorSchema,
  RISK_CATEGORIES,
  RISK_LEVELS,
  RISK_STATUSES,
  type RiskStatus,
  type ThirdPartyRisk,
  thirdPartyRiskSchema,
} from "../models/operators.js";
import { invalid, notFound, Problem } from "../problem.js";
import { defineRoute, type ExampleContext, json } from "../routing.js";
import { assertSirens } from "../siren.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { boolParam, uuid } from "../validation.js";
import { checkBusinessData } from "./business-data.js";
import {
  differs,
  externalId,
  externalParams,
  isoAt,
  mergeObject,
  requireChanges,
  sentFields,
  upserted,
} from "./mutations.js";
import { nameFilter, page, pageQuery, sameName } from "./pagination.js";

/**
 * A third-party risk's life (the sandbox's; the spec shows no risk fields): identified, under
 * treatment, under control, closed for good. Each move is named after the status it leads to;
 * a risk under control goes back under treatment if its measures fail.
 */
export const RISK_MOVES: Transitions<RiskStatus, RiskStatus> = {
  identifie: [],
  en_traitement: ["identifie", "maitrise"],
  maitrise: ["en_traitement"],
  clos: ["identifie", "en_traitement", "maitrise"],
};

const operatorParams = z.strictObject({ operateur_id: uuid });
const riskParams = z.strictObject({ operateur_id: uuid, risk_id: uuid });
const siren = z.string().regex(/^\d{9}$/, "must be exactly 9 digits");

/** Spec part 2, Operator: the fields a write may send (the others are the service's). */
const operatorFields = {
  name: z.string().trim().min(1).max(200),
  siren: siren.nullish(),
  type: z.enum(OPERATOR_TYPES).nullish(),
  data: jsonObject.optional(),
  source_extraction: z.boolean().optional(),
  litiges_en_cours: z.boolean().optional(),
  litiges_detail: z.string().trim().min(1).max(5000).nullish(),
  responsable_interne: z.string().trim().min(1).max(200).nullish(),
  reputation_gouvernance_score: z.number().min(0).max(100).nullish(),
  reputation_gouvernance_label: z.string().trim().min(1).max(100).nullish(),
  forme_societe_mere: z.string().trim().min(1).max(20).nullish(),
  siren_mere: siren.nullish(),
};
type OperatorInput = Partial<z.output<z.ZodObject<typeof operatorFields>>>;

const riskFields = {
  category: z.enum(RISK_CATEGORIES),
  level: z.enum(RISK_LEVELS),
  title: z.string().trim().min(1).max(200),
  description: z.string().max(5000).nullish(),
  mitigation: z.string().trim().min(1).max(5000).nullish(),
  owner: z.string().trim().min(1).max(200).nullish(),
  review_date: date.nullish(),
};

/** The label the entity gives a governance score, as the seeded operators carry it. */
function reputationLabel(score: number): string {
  return score >= 80 ? "Solide" : score >= 60 ? "Satisfaisant" : "À surveiller";
}

function findOperator(state: SandboxState, id: string): Operator {
  const operator = state.data.operators.find((o) => o.id === id.toLowerCase());
  if (!operator) throw notFound("operator", id, "operateur_not_found");
  return operator;
}

function findRisk(state: SandboxState, operator: Operator, id: string): ThirdPartyRisk {
  const risk = state.data.operatorRisks.find(
    (r) => r.id === id.toLowerCase() && r.operateur_id === operator.id,
  );
  if (!risk) throw notFound("third-party risk on this operator", id, "risk_not_found");
  return risk;
}

/**
 * The operator as a write would leave it, or the refusal. SIRENs are checked (spec part 2:
 * "checksum verified where the route provides it") and unique; `data` is merged key by key
 * after the field definitions; a label follows a new score unless one is sent.
 */
function prepareOperator(
  state: SandboxState,
  current: Operator | null,
  body: OperatorInput,
  at: string,
): Operator {
  assertSirens({ siren: body.siren, siren_mere: body.siren_mere });
  if (body.siren) {
    const twin = state.data.operators.find((o) => o !== current && o.siren === body.siren);
    if (twin)
      throw new Problem(409, `SIREN ${body.siren} is already operator ${twin.id}'s.`, {
        reasonCode: "siren_taken",
      });
  }
  if (body.data) checkBusinessData(state, "operateur", body.data);
  const base: Operator = current ?? {
    id: randomUUID(),
    data: {},
    source_extraction: false,
    litiges_en_cours: false,
    created_at: at,
    updated_at: at,
    name: null,
    siren: null,
    type: null,
    litiges_detail: null,
    responsable_interne: null,
    reputation_gouvernance_score: null,
    reputation_gouvernance_label: null,
    forme_societe_mere: null,
    siren_mere: null,
    external_id: null,
  };
  const sent = sentFields(body);
  const score = sent.reputation_gouvernance_score;
  const next: Operator = {
    ...base,
    ...sent,
    data: sent.data ? mergeObject(base.data, sent.data) : base.data,
    ...(score !== undefined && sent.reputation_gouvernance_label === undefined
      ? { reputation_gouvernance_label: score === null ? null : reputationLabel(score) }
      : {}),
  };
  if (!next.litiges_en_cours && next.litiges_detail !== null) {
    throw invalid([
      {
        field: "litiges_detail",
        rule: "only with litiges_en_cours",
        message: "describes ongoing disputes: set litiges_en_cours to true, or send null",
      },
    ]);
  }
  return next;
}

function assertExternalIdFree(state: SandboxState, id: string | null | undefined): void {
  const owner = id ? state.data.operators.find((o) => o.external_id === id) : undefined;
  if (owner)
    throw new Problem(409, `External id ${id} is already operator ${owner.id}'s.`, {
      reasonCode: "external_id_taken",
    });
}

const WRITE_REFUSALS = {
  409: ["siren_taken"],
  422: ["siren_invalid", "unknown_business_field", "business_field_unavailable"],
} as const;

/** For the contract test: the first operator by name a source system synchronises. */
function syncedOperator({ state }: ExampleContext): Operator | undefined {
  return state.data.operators
    .filter((o) => o.external_id !== null)
    .sort((a, b) => (a.name ?? "").localeCompare(b.name ?? "", "fr"))[0];
}

/** For the contract test: a risk a treatment may start on, and its operator. */
function riskExample({ state }: ExampleContext) {
  const risk = state.data.operatorRisks.find((r) => r.status === "identifie");
  return risk ? { params: { operateur_id: risk.operateur_id, risk_id: risk.id } } : {};
}

export const operatorRoutes = [
  defineRoute({
    id: "operators_list",
    family: "operators",
    method: "GET",
    path: "/operateurs",
    scope: "operateurs:read",
    kind: "read",
    summary: "List operators",
    description: "`name` (exact) and `search` (partial, or a SIREN prefix) are mutually exclusive.",
    response: { status: 200, schema: component("OperatorList", pageOf(operatorSchema)) },
    query: z.strictObject({
      name: nameFilter.optional(),
      search: z.string().min(1).max(255).optional(),
      ...pageQuery(200, 50),
    }),
    handle({ query, state }) {
      if (query.name !== undefined && query.search !== undefined) {
        throw invalid([
          {
            field: "search",
            rule: "exclusive with name",
            message: "name and search are mutually exclusive; send one",
          },
        ]);
      }
      const needle = query.search?.trim().toLowerCase();
      const operators = state.data.operators
        .filter(
          (o) =>
            (query.name === undefined || sameName(o.name, query.name)) &&
            (needle === undefined ||
              (o.name ?? "").toLowerCase().includes(needle) ||
              (o.siren ?? "").startsWith(needle)),
        )
        .sort((a, b) => (a.name ?? "").localeCompare(b.name ?? "", "fr"));
      return json(page(operators, query));
    },
  }),
  defineRoute({
    id: "operator_create",
    family: "operators",
    method: "POST",
    path: "/operateurs",
    scope: "operateurs:write",
    kind: "write",
    summary: "Create an operator",
    description:
      "SIRENs (`siren`, `siren_mere`) must pass their check digit (422 `siren_invalid`) and `siren` be unique (409 `siren_taken`); `data` keys follow the field definitions of operators; `reputation_gouvernance_label` follows the score unless sent; `litiges_detail` needs `litiges_en_cours`.",
    body: z.strictObject({ ...operatorFields, external_id: externalId.nullish() }),
    response: { status: 201, schema: operatorSchema },
    refusals: { ...WRITE_REFUSALS, 409: [...WRITE_REFUSALS[409], "external_id_taken"] },
    example: () => ({
      body: {
        name: "Savoie Habitat Promotion",
        siren: "732829320",
        type: "promoteur",
        data: { effectif: 24, annee_creation: 2004 },
        reputation_gouvernance_score: 74,
      },
    }),
    handle({ body, state, now }) {
      assertExternalIdFree(state, body.external_id);
      const operator = prepareOperator(state, null, body, isoAt(now()));
      state.data.operators.push(operator);
      return json(operator, 201);
    },
  }),
  defineRoute({
    id: "operator_get",
    family: "operators",
    method: "GET",
    path: "/operateurs/{operateur_id}",
    scope: "operateurs:read",
    kind: "read",
    summary: "Get an operator",
    response: { status: 200, schema: operatorSchema },
    refusals: { 404: ["operateur_not_found"] },
    params: operatorParams,
    handle: ({ params, state }) => json(findOperator(state, params.operateur_id)),
  }),
  defineRoute({
    id: "operator_update",
    family: "operators",
    method: "PATCH",
    path: "/operateurs/{operateur_id}",
    scope: "operateurs:write",
    kind: "write",
    summary: "Change an operator",
    description:
      "Absent fields are left as they are, null clears; `data` is merged key by key (null removes a key). Same checks as creation.",
    params: operatorParams,
    body: z.strictObject(operatorFields).partial(),
    response: { status: 200, schema: operatorSchema },
    refusals: { ...WRITE_REFUSALS, 404: ["operateur_not_found"] },
    example: () => ({ body: { responsable_interne: "Thomas Petit" } }),
    handle({ params, body, state, now }) {
      const operator = findOperator(state, params.operateur_id);
      requireChanges(body);
      const at = isoAt(now());
      const next = prepareOperator(state, operator, body, at);
      if (differs(next, operator, ["updated_at"]))
        Object.assign(operator, next, { updated_at: at });
      return json(operator);
    },
  }),
  defineRoute({
    id: "operator_get_by_external",
    family: "operators",
    method: "GET",
    path: "/operateurs/external/{external_id}",
    scope: "operateurs:read",
    kind: "read",
    summary: "Get an operator by its external id",
    params: externalParams,
    response: { status: 200, schema: operatorSchema },
    refusals: { 404: ["operateur_not_found"] },
    example: (ctx) => {
      const operator = syncedOperator(ctx);
      return operator?.external_id ? { params: { external_id: operator.external_id } } : {};
    },
    handle({ params, state }) {
      const operator = state.data.operators.find((o) => o.external_id === params.external_id);
      if (!operator)
        throw notFound("operator", `external ${params.external_id}`, "operateur_not_found");
      return json(operator);
    },
  }),
  defineRoute({
    id: "operator_sync",
    family: "operators",
    method: "PUT",
    path: "/operateurs/external/{external_id}",
    scope: "operateurs:write",
    kind: "write",
    summary: "Create or update an operator by its external id",
    description:
      "An upsert: 201 with the new operator when the external id is unknown, 200 when it is known (updated, or left as it is when nothing differs). The source system writes only the fields it sends: absent ones are left as they are, null clears. Same checks as creation.",
    params: externalParams,
    body: z.strictObject(operatorFields),
    response: { status: 200, schema: operatorSchema, created: 201 },
    refusals: WRITE_REFUSALS,
    example: (ctx) => {
      const operator = syncedOperator(ctx);
      return operator?.external_id
        ? { params: { external_id: operator.external_id }, body: { name: operator.name } }
        : {};
    },
    handle({ params, body, state, now }) {
      const at = isoAt(now());
      const current = state.data.operators.find((o) => o.external_id === params.external_id);
      const next = prepareOperator(state, current ?? null, body, at);
      if (!current) {
        const created = { ...next, external_id: params.external_id };
        state.data.operators.push(created);
        return upserted(created, true);
      }
      if (differs(next, current, ["updated_at"])) Object.assign(current, next, { updated_at: at });
      return upserted(current, false);
    },
  }),
  defineRoute({
    id: "operator_risks_list",
    family: "operators",
    method: "GET",
    path: "/operateurs/{operateur_id}/third-party-risks",
    scope: "operateurs:read",
    kind: "read",
    summary: "List an operator's third-party risks, most severe first",
    params: operatorParams,
    query: z.strictObject({
      status: z.enum(RISK_STATUSES).optional(),
      level: z.enum(RISK_LEVELS).optional(),
      open_only: boolParam().optional(),
      ...pageQuery(100, 20),
    }),
    response: {
      status: 200,
      schema: component("ThirdPartyRiskList", pageOf(thirdPartyRiskSchema)),
    },
    refusals: { 404: ["operateur_not_found"] },
    handle({ params, query, state }) {
      const operator = findOperator(state, params.operateur_id);
      const risks = state.data.operatorRisks
        .filter(
          (r) =>
            r.operateur_id === operator.id &&
            (query.status === undefined || r.status === query.status) &&
            (query.level === undefined || r.level === query.level) &&
            (!query.open_only || OPEN_RISK_STATUSES.includes(r.status)),
        )
        .sort(
          (a, b) =>
            RISK_RANK[a.level] - RISK_RANK[b.level] ||
            b.identified_at.localeCompare(a.identified_at) ||
            a.id.localeCompare(b.id),
        );
      return json(page(risks, query));
    },
  }),
  defineRoute({
    id: "operator_risk_create",
    family: "operators",
    method: "POST",
    path: "/operateurs/{operateur_id}/third-party-risks",
    scope: "operateurs:write",
    kind: "write",
    summary: "Record a third-party risk on an operator",
    description:
      "A new risk is `identifie`, identified today, recorded by the key's service account.",
    params: operatorParams,
    body: z.strictObject(riskFields),
    response: { status: 201, schema: thirdPartyRiskSchema },
    refusals: { 404: ["operateur_not_found"] },
    handle({ params, body, state, key, now }) {
      const operator = findOperator(state, params.operateur_id);
      const at = isoAt(now());
      const risk: ThirdPartyRisk = {
        id: randomUUID(),
        operateur_id: operator.id,
        category: body.category,
        level: body.level,
        status: "identifie",
        title: body.title,
        description: body.description ?? null,
        mitigation: body.mitigation ?? null,
        owner: body.owner ?? null,
        review_date: body.review_date ?? null,
        identified_at: at.slice(0, 10),
        closed_at: null,
        created_by: serviceAccount(key),
        created_at: at,
        updated_at: at,
      };
      state.data.operatorRisks.push(risk);
      return json(risk, 201);
    },
  }),
  defineRoute({
    id: "operator_risk_update",
    family: "operators",
    method: "PATCH",
    path: "/operateurs/{operateur_id}/third-party-risks/{risk_id}",
    scope: "operateurs:write",
    kind: "write",
    summary: "Change a third-party risk, or move it along its life",
    description:
      "Absent fields are left as they are, null clears. `status`: identifie → en_traitement → maitrise (which needs a `mitigation`), back to en_traitement if the measures fail, clos from any of them and final (409 `invalid_transition`).",
    params: riskParams,
    body: z.strictObject({ ...riskFields, status: z.enum(RISK_STATUSES) }).partial(),
    response: { status: 200, schema: thirdPartyRiskSchema },
    refusals: { 404: ["operateur_not_found", "risk_not_found"], 409: ["invalid_transition"] },
    example: (ctx) => ({ ...riskExample(ctx), body: { status: "en_traitement" } }),
    handle({ params, body, state, now }) {
      const risk = findRisk(state, findOperator(state, params.operateur_id), params.risk_id);
      requireChanges(body);
      const at = isoAt(now());
      const next: ThirdPartyRisk = { ...risk, ...sentFields(body) };
      if (next.status !== risk.status) {
        assertTransition(RISK_MOVES, next.status, risk.status, `Risk ${risk.id}`);
        if (next.status === "clos") next.closed_at = at;
      }
      if (next.status === "maitrise" && next.mitigation === null) {
        throw invalid([
          {
            field: "mitigation",
            rule: "required under control",
            message: "say which measures keep the risk under control",
          },
        ]);
      }
      Object.assign(risk, next, { updated_at: at });
      return json(risk);
    },
  }),
];
