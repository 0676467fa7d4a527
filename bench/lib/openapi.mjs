// An OpenAPI 3.1 document of the sandbox's routes, built from its own route table, for the
// generic OpenAPI-to-MCP bridge the benchmark compares against. The token exchange is left
// out: the bridge is given a fixed bearer.

import { ROUTES } from "@portfolio-mcp/sandbox";
import { z } from "zod";

const schemaOf = (schema, io) => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
};

/** Which of our tools answers each route: the bridge gets the same prose, so only shapes differ. */
const TOOL_FOR_ROUTE = {
  portfolio_get: "get_portfolio_overview",
  operations_list: "list_operations",
  operation_get: "get_operation",
  operation_notes_list: "list_operation_notes",
  operation_note_create: "create_operation_note",
  deals_list: "list_deals",
  deal_get: "get_deal",
  spvs_list: "list_spvs",
  operators_list: "find_operators",
  operator_get: "get_operator",
  taxonomies_get: "get_taxonomies",
  field_definitions_list: "get_field_definitions",
  field_definition_get: "get_field_definitions",
  siren_get: "lookup_siren",
  siren_validate: "validate_siren",
  siren_resolve: "resolve_siren",
  calendar_list: "list_calendar_events",
  notifications_unread_count: "get_unread_notification_count",
  reports_inrev: "export_inrev_report",
  workflow_recommendations_preview: "preview_workflow_recommendations",
  workflow_create_from_recommendation: "create_workflow_from_recommendation",
  me_get: "get_my_profile",
  saved_views_list: "list_my_saved_views",
  saved_view_create: "create_saved_view",
  saved_view_update: "update_saved_view",
  custom_dashboards_list: "list_my_dashboards",
  custom_dashboard_create: "create_custom_dashboard",
};

/**
 * `tools`: our tools/list, whose titles and descriptions document the same operations. Only
 * the routes our tools answer are described, so the comparison stays like for like as the
 * sandbox grows towards the whole contract.
 */
export function sandboxOpenApi(baseUrl, tools = []) {
  const prose = new Map(tools.map((t) => [t.name, t]));
  const paths = {};
  for (const route of ROUTES.filter((r) => r.id in TOOL_FOR_ROUTE)) {
    const parameters = [];
    for (const [where, schema] of [
      ["path", route.params],
      ["query", route.query],
    ]) {
      if (!schema) continue;
      const json = schemaOf(schema, "input");
      for (const [name, property] of Object.entries(json.properties ?? {})) {
        parameters.push({
          name,
          in: where,
          required: where === "path" || (json.required ?? []).includes(name),
          schema: property,
        });
      }
    }
    const operation = {
      operationId: route.id,
      summary: prose.get(TOOL_FOR_ROUTE[route.id])?.title ?? route.id.replaceAll("_", " "),
      description: prose.get(TOOL_FOR_ROUTE[route.id])?.description,
      parameters,
      responses: {
        200: { description: "OK", content: { "application/json": { schema: { type: "object" } } } },
      },
    };
    if (route.body) {
      operation.requestBody = {
        content: { "application/json": { schema: schemaOf(route.body, "input") } },
      };
    }
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: { title: "Partner API (sandbox)", version: "1" },
    servers: [{ url: baseUrl }],
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}
