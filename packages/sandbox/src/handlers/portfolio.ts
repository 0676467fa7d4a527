import { businessDate } from "../clock.js";
import {
  integrationContextSchema,
  portfolioSummarySchema,
  rcciSummarySchema,
} from "../models/entity.js";
import { fromCents, toCents } from "../money.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";
import { rcciSummary } from "./rcci.js";

/** Groups `items` by a key and sums the named decimal-string amounts of each group. */
function groupSum<T, A extends string>(
  items: readonly T[],
  keyOf: (item: T) => string | null,
  amountsOf: (item: T) => Record<A, unknown>,
): Array<{ key: string | null; count: number } & Record<A, string>> {
  const groups = new Map<string | null, { count: number; sums: Map<A, bigint> }>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key) ?? { count: 0, sums: new Map<A, bigint>() };
    group.count++;
    for (const [name, value] of Object.entries(amountsOf(item)) as Array<[A, unknown]>) {
      group.sums.set(name, (group.sums.get(name) ?? 0n) + toCents(value));
    }
    groups.set(key, group);
  }
  return [...groups.entries()]
    .sort(([, a], [, b]) => b.count - a.count)
    .map(([key, { count, sums }]) => ({
      key,
      count,
      ...(Object.fromEntries([...sums].map(([name, cents]) => [name, fromCents(cents)])) as Record<
        A,
        string
      >),
    }));
}

/** Portfolio aggregates (fields are the sandbox's choice; see README). Amounts are strings. */
export function portfolioSummary(state: SandboxState, asOf: string) {
  const { operations, spvs, deals, entity } = state.data;
  const amounts = (o: (typeof operations)[number]) => ({
    montant_engage: o.financial_summary.montant_engage,
    encours: o.financial_summary.encours,
  });
  const [total] = groupSum(operations, () => "all", amounts);
  const spvName = new Map(spvs.map((s) => [s.id, s.name]));
  return {
    entity: { id: entity.id, name: entity.name },
    as_of: asOf,
    currency: entity.currency,
    totals: {
      operations: operations.length,
      montant_engage: total?.montant_engage ?? "0.00",
      encours: total?.encours ?? "0.00",
      deals: deals.length,
    },
    by_status: groupSum(operations, (o) => o.status, amounts).map(({ key, ...rest }) => ({
      status: key,
      ...rest,
    })),
    by_asset_class: groupSum(operations, (o) => o.classe_actif, amounts).map(
      ({ key, ...rest }) => ({
        classe_actif: key,
        ...rest,
      }),
    ),
    by_spv: groupSum(operations, (o) => o.spv_id, amounts).map(({ key, ...rest }) => ({
      spv_id: key,
      spv_name: key ? (spvName.get(key) ?? null) : null,
      ...rest,
    })),
    deals_by_status: groupSum(
      deals,
      (d) => d.status,
      (d) => ({ montant_estime: d.montant_estime }),
    ).map(({ key, ...rest }) => ({ status: key, ...rest })),
  };
}

export const portfolioRoutes = [
  defineRoute({
    id: "portfolio_get",
    family: "entity",
    method: "GET",
    path: "/portfolio",
    scope: "portfolio:read",
    kind: "read",
    summary: "Portfolio aggregates",
    response: { status: 200, schema: portfolioSummarySchema },
    handle: ({ state, now }) => json(portfolioSummary(state, new Date(now()).toISOString())),
  }),
  defineRoute({
    id: "context_get",
    family: "entity",
    method: "GET",
    path: "/context",
    scope: "portfolio:read",
    kind: "read",
    summary: "The integration context: entity, environment, this key's rights",
    description:
      "What the bearer stands for (spec part 1: one entity, one environment, no switching): the entity, the environment, and the key's scopes, route allowlist, capabilities and delegated users.",
    response: { status: 200, schema: integrationContextSchema },
    handle: ({ state, key, now }) =>
      json({
        entity: {
          id: state.data.entity.id,
          name: state.data.entity.name,
          currency: state.data.entity.currency,
        },
        environment: state.data.entity.environment,
        api_version: "v1",
        key: {
          key_id: key.keyId,
          label: key.label,
          scopes: [...key.scopes],
          routes: key.routes ? [...key.routes] : null,
          capabilities: [...key.capabilities],
          delegated_user_ids: [...key.delegatedUsers],
        },
        server_time: new Date(now()).toISOString(),
        business_date: businessDate(now()),
        time_zone: "Europe/Paris",
      }),
  }),
  defineRoute({
    id: "rcci_summary_get",
    family: "entity",
    method: "GET",
    path: "/rcci/summary",
    scope: "portfolio:read",
    kind: "read",
    summary: "The compliance and risk-control (RCCI) summary",
    description:
      "Controls computed from live data, worst first (non_conforme, a_surveiller, conforme): covenants, repayments, counterparties' SIRENs, operators' disputes, third-party risks and their reviews, reporting, sensitive operations; then the figures behind them.",
    response: { status: 200, schema: rcciSummarySchema },
    handle: ({ state, now }) => json(rcciSummary(state, now())),
  }),
];
