import { portfolioSummarySchema } from "../models/entity.js";
import { fromCents, toCents } from "../money.js";
import { defineRoute, json } from "../routing.js";
import type { SandboxState } from "../state.js";

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
];
