import { describe, expect, it } from "vitest";
import { FAMILIES } from "../src/contract/families.js";
import { CONTRACT_TABLE, SCOPE_FAMILIES } from "../src/contract/table.js";
import { ROUTES } from "../src/routes.js";
import { EXCHANGE_OPERATION } from "../src/tokens.js";

/** The 28 operations the project had before the whole contract: ids and paths are kept. */
const EXISTING: Record<string, string> = {
  auth_token: "POST /auth/token",
  portfolio_get: "GET /portfolio",
  operations_list: "GET /operations",
  operation_get: "GET /operations/{operation_id}",
  operation_notes_list: "GET /operations/{operation_id}/notes",
  operation_note_create: "POST /operations/{operation_id}/notes",
  deals_list: "GET /deals",
  deal_get: "GET /deals/{deal_id}",
  spvs_list: "GET /spvs",
  operators_list: "GET /operateurs",
  operator_get: "GET /operateurs/{operateur_id}",
  taxonomies_get: "GET /taxonomies",
  field_definitions_list: "GET /field-definitions",
  field_definition_get: "GET /field-definitions/by-key/{field_key}",
  siren_get: "GET /enrichment/siren/{siren}",
  siren_validate: "GET /enrichment/siren/{siren}/validate",
  siren_resolve: "POST /enrichment/siren/{siren}/resolve",
  calendar_list: "GET /calendar/events",
  notifications_unread_count: "GET /notifications/unread-count",
  reports_inrev: "GET /reports/inrev",
  workflow_recommendations_preview: "POST /workflows/recommendations/preview",
  workflow_create_from_recommendation:
    "POST /workflows/recommendations/{recommendation_id}/workflow",
  me_get: "GET /users/me",
  saved_views_list: "GET /users/me/saved-views",
  saved_view_create: "POST /users/me/saved-views",
  saved_view_update: "PATCH /users/me/saved-views/{view_id}",
  custom_dashboards_list: "GET /users/me/custom-dashboards",
  custom_dashboard_create: "POST /users/me/custom-dashboards",
};

/** Family sizes as the spec's 158 add up (contract-routes.md). */
const SIZES: Record<string, number> = {
  auth: 1,
  entity: 3,
  deals: 7,
  funds: 12,
  operators: 9,
  operations: 13,
  taxonomies: 4,
  timeline: 2,
  documents: 9,
  users: 8,
  delegated: 21,
  settings: 6,
  search: 2,
  alerts: 10,
  calendar: 7,
  siren: 4,
  repayments: 5,
  reporting: 7,
  workflows: 14,
  ai_extraction: 5,
  tasks: 9,
};

const served = [EXCHANGE_OPERATION, ...ROUTES];
const contractFields = (op: (typeof served)[number]) => ({
  id: op.id,
  family: op.family,
  method: op.method,
  path: op.path,
  scope: op.scope,
  kind: op.kind,
  ...(op.capability ? { capability: op.capability } : {}),
});

describe("the contract table", () => {
  it("has the 158 operations of spec part 1: 79 reads, 78 writes, the token exchange", () => {
    expect(CONTRACT_TABLE).toHaveLength(158);
    const kinds = CONTRACT_TABLE.map((op) => op.kind);
    expect(kinds.filter((k) => k === "read")).toHaveLength(79);
    expect(kinds.filter((k) => k === "write")).toHaveLength(78);
    expect(kinds.filter((k) => k === "exchange")).toHaveLength(1);
  });

  it("covers the 21 families in the spec's order, with their sizes", () => {
    expect(FAMILIES).toHaveLength(21);
    const families = [...new Set(CONTRACT_TABLE.map((op) => op.family))];
    expect(families).toEqual(FAMILIES.map((f) => f.tag));
    const sizes = Object.fromEntries(
      families.map((f) => [f, CONTRACT_TABLE.filter((op) => op.family === f).length]),
    );
    expect(sizes).toEqual(SIZES);
  });

  it("has unique ids and one operation per method and path", () => {
    const ids = CONTRACT_TABLE.map((op) => op.id);
    expect(new Set(ids).size).toBe(ids.length);
    const routes = CONTRACT_TABLE.map((op) => `${op.method} ${op.path}`);
    expect(new Set(routes).size).toBe(routes.length);
  });

  it("keeps the 28 existing ids at their paths", () => {
    const table = Object.fromEntries(
      CONTRACT_TABLE.map((op) => [op.id, `${op.method} ${op.path}`]),
    );
    for (const [id, route] of Object.entries(EXISTING)) expect(table[id], id).toBe(route);
  });

  it("follows the scope rules of spec part 5", () => {
    for (const op of CONTRACT_TABLE) {
      if (op.kind === "exchange") {
        expect(op.scope).toBeNull();
        continue;
      }
      // A read needs a read scope, a write a write scope, whatever the method.
      expect(op.scope, op.id).toBe(`${op.scope?.split(":")[0]}:${op.kind}`);
      // Delegation is exactly the /users/me family.
      expect(Boolean(op.capability), op.id).toBe(op.path.startsWith("/users/me"));
    }
    const scopeOf = (id: string) => CONTRACT_TABLE.find((op) => op.id === id)?.scope;
    expect(scopeOf("repayments_list")).toBe("operations:read");
    expect(scopeOf("repayment_create")).toBe("operations:write");
    expect(scopeOf("siren_cache_delete")).toBe("operateurs:write");
    expect(scopeOf("rcci_summary_get")).toBe("portfolio:read");
    expect(scopeOf("extraction_job_create")).toBe("ai_extraction:write");
    expect(scopeOf("workflow_recommendations_preview")).toBe("workflows:read");
    expect(SCOPE_FAMILIES).toHaveLength(19);
  });
});

describe("what the sandbox serves", () => {
  const table = new Map(CONTRACT_TABLE.map((op) => [op.id, op]));
  const servedIds = new Set(served.map((op) => op.id));

  it("serves each route exactly as the table declares it", () => {
    for (const op of served) expect(contractFields(op), op.id).toEqual(table.get(op.id));
    expect(servedIds.size).toBe(served.length);
  });

  it("serves all 158 operations of the table, and nothing else", () => {
    expect(CONTRACT_TABLE.filter((op) => !servedIds.has(op.id)).map((op) => op.id)).toEqual([]);
    expect(served).toHaveLength(158);
  });
});
