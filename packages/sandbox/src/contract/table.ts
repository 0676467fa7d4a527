import type { FamilyTag } from "./families.js";

/**
 * The whole contract: the 158 operations of spec part 1, as data, in one place. The sandbox's
 * served routes must equal this table (test/sandbox/contract-table.test.ts); the export and the
 * route table of docs/sandbox.md are generated from what is served, never from here, so they cannot promise a route the
 * sandbox does not answer.
 *
 * Adapted from ../shared/contract-routes.md: the 28 operations the project already had keep
 * their ids and paths; scopes follow the spec's cross-family rules (part 5): repayments use
 * operations:*, SIREN operateurs:*, the RCCI summary portfolio:read, extraction ai_extraction:*.
 * Read or write is stated, never derived from the method: a POST can be a read (spec part 1).
 */

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type OperationKind = "read" | "write" | "exchange";

/** The delegated capabilities of spec part 5, one per group of `/users/me*` routes. */
export const CAPABILITIES = [
  "user_self_service",
  "saved_views",
  "custom_dashboards",
  "rgpd_export",
  "rgpd_inventory",
  "rgpd_erasure",
] as const;
export type Capability = (typeof CAPABILITIES)[number];

type Row = readonly [
  id: string,
  method: HttpMethod,
  path: string,
  scope: string | null,
  kind: OperationKind,
  capability?: Capability,
];

const R = "read";
const W = "write";

// biome-ignore format: a table reads best with its columns aligned
const ROWS: Record<FamilyTag, readonly Row[]> = {
  auth: [
    ["auth_token",                          "POST",   "/auth/token",                                           null,                 "exchange"],
  ],
  entity: [
    ["portfolio_get",                       "GET",    "/portfolio",                                            "portfolio:read",     R],
    ["context_get",                         "GET",    "/context",                                              "portfolio:read",     R],
    ["rcci_summary_get",                    "GET",    "/rcci/summary",                                         "portfolio:read",     R],
  ],
  deals: [
    ["deals_list",                          "GET",    "/deals",                                                "deals:read",         R],
    ["deal_create",                         "POST",   "/deals",                                                "deals:write",        W],
    ["deal_get",                            "GET",    "/deals/{deal_id}",                                      "deals:read",         R],
    ["deal_update",                         "PATCH",  "/deals/{deal_id}",                                      "deals:write",        W],
    ["deal_notes_list",                     "GET",    "/deals/{deal_id}/notes",                                "deals:read",         R],
    ["deal_note_create",                    "POST",   "/deals/{deal_id}/notes",                                "deals:write",        W],
    ["deal_note_update",                    "PATCH",  "/deals/{deal_id}/notes/{note_id}",                      "deals:write",        W],
  ],
  funds: [
    ["funds_list",                          "GET",    "/fonds",                                                "fonds:read",         R],
    ["fund_create",                         "POST",   "/fonds",                                                "fonds:write",        W],
    ["fund_get",                            "GET",    "/fonds/{fond_id}",                                      "fonds:read",         R],
    ["fund_update",                         "PATCH",  "/fonds/{fond_id}",                                      "fonds:write",        W],
    ["fund_spvs_list",                      "GET",    "/fonds/{fond_id}/spvs",                                 "fonds:read",         R],
    ["spvs_list",                           "GET",    "/spvs",                                                 "spvs:read",          R],
    ["spv_get",                             "GET",    "/spvs/{spv_id}",                                        "spvs:read",          R],
    ["spv_attachments_list",                "GET",    "/spvs/{spv_id}/attachments",                            "spvs:read",          R],
    ["spv_attachment_create",               "POST",   "/spvs/{spv_id}/attachments",                            "spvs:write",         W],
    ["spv_attachment_delete",               "DELETE", "/spvs/{spv_id}/attachments/{operation_id}",             "spvs:write",         W],
    ["spv_get_by_external",                 "GET",    "/spvs/external/{external_id}",                          "spvs:read",          R],
    ["spv_sync",                            "PUT",    "/spvs/external/{external_id}",                          "spvs:write",         W],
  ],
  operators: [
    ["operators_list",                      "GET",    "/operateurs",                                           "operateurs:read",    R],
    ["operator_create",                     "POST",   "/operateurs",                                           "operateurs:write",   W],
    ["operator_get",                        "GET",    "/operateurs/{operateur_id}",                            "operateurs:read",    R],
    ["operator_update",                     "PATCH",  "/operateurs/{operateur_id}",                            "operateurs:write",   W],
    ["operator_get_by_external",            "GET",    "/operateurs/external/{external_id}",                    "operateurs:read",    R],
    ["operator_sync",                       "PUT",    "/operateurs/external/{external_id}",                    "operateurs:write",   W],
    ["operator_risks_list",                 "GET",    "/operateurs/{operateur_id}/third-party-risks",          "operateurs:read",    R],
    ["operator_risk_create",                "POST",   "/operateurs/{operateur_id}/third-party-risks",          "operateurs:write",   W],
    ["operator_risk_update",                "PATCH",  "/operateurs/{operateur_id}/third-party-risks/{risk_id}", "operateurs:write",  W],
  ],
  operations: [
    ["operations_list",                     "GET",    "/operations",                                           "operations:read",    R],
    ["operation_create",                    "POST",   "/operations",                                           "operations:write",   W],
    ["operation_get",                       "GET",    "/operations/{operation_id}",                            "operations:read",    R],
    ["operation_update",                    "PATCH",  "/operations/{operation_id}",                            "operations:write",   W],
    ["operation_get_by_external",           "GET",    "/operations/external/{external_id}",                    "operations:read",    R],
    ["operation_sync",                      "PUT",    "/operations/external/{external_id}",                    "operations:write",   W],
    ["operation_notes_list",                "GET",    "/operations/{operation_id}/notes",                      "operations:read",    R],
    ["operation_note_create",               "POST",   "/operations/{operation_id}/notes",                      "operations:write",   W],
    ["operation_note_update",               "PATCH",  "/operations/{operation_id}/notes/{note_id}",            "operations:write",   W],
    ["operation_note_resolve",              "POST",   "/operations/{operation_id}/notes/{note_id}/resolve",    "operations:write",   W],
    ["operation_imports_list",              "GET",    "/operations/imports",                                   "operations:read",    R],
    ["operation_import_create",             "POST",   "/operations/imports",                                   "operations:write",   W],
    ["operation_import_get",                "GET",    "/operations/imports/{import_id}",                       "operations:read",    R],
  ],
  taxonomies: [
    ["taxonomies_get",                      "GET",    "/taxonomies",                                           "taxonomies:read",    R],
    ["taxonomy_get",                        "GET",    "/taxonomies/{dimension}",                               "taxonomies:read",    R],
    ["field_definitions_list",              "GET",    "/field-definitions",                                    "taxonomies:read",    R],
    ["field_definition_get",                "GET",    "/field-definitions/by-key/{field_key}",                 "taxonomies:read",    R],
  ],
  timeline: [
    ["operation_timeline",                  "GET",    "/operations/{operation_id}/timeline",                   "timeline:read",      R],
    ["operation_narrative",                 "GET",    "/operations/{operation_id}/timeline/narrative",         "timeline:read",      R],
  ],
  documents: [
    ["documents_list",                      "GET",    "/documents",                                            "documents:read",     R],
    ["document_upload",                     "POST",   "/documents",                                            "documents:write",    W],
    ["document_get",                        "GET",    "/documents/{document_id}",                              "documents:read",     R],
    ["document_update",                     "PATCH",  "/documents/{document_id}",                              "documents:write",    W],
    ["document_delete",                     "DELETE", "/documents/{document_id}",                              "documents:write",    W],
    ["document_download",                   "GET",    "/documents/{document_id}/download",                     "documents:read",     R],
    ["document_attachment_create",          "POST",   "/documents/{document_id}/attachments",                  "documents:write",    W],
    ["document_attachment_delete",          "DELETE", "/documents/{document_id}/attachments/{attachment_id}",  "documents:write",    W],
    ["operation_documents_list",            "GET",    "/operations/{operation_id}/documents",                  "documents:read",     R],
  ],
  users: [
    ["users_list",                          "GET",    "/users",                                                "users:read",         R],
    ["user_invite",                         "POST",   "/users",                                                "users:write",        W],
    ["user_get",                            "GET",    "/users/{user_id}",                                      "users:read",         R],
    ["user_update",                         "PATCH",  "/users/{user_id}",                                      "users:write",        W],
    ["user_activate",                       "POST",   "/users/{user_id}/activate",                             "users:write",        W],
    ["user_suspend",                        "POST",   "/users/{user_id}/suspend",                              "users:write",        W],
    ["user_reset_password",                 "POST",   "/users/{user_id}/password-reset",                       "users:write",        W],
    ["user_resend_invitation",              "POST",   "/users/{user_id}/invitation",                           "users:write",        W],
  ],
  delegated: [
    ["me_get",                              "GET",    "/users/me",                                             "users:read",         R, "user_self_service"],
    ["me_update",                           "PATCH",  "/users/me",                                             "users:write",        W, "user_self_service"],
    ["me_preferences_get",                  "GET",    "/users/me/preferences",                                 "users:read",         R, "user_self_service"],
    ["me_preferences_update",               "PATCH",  "/users/me/preferences",                                 "users:write",        W, "user_self_service"],
    ["me_alert_preferences_get",            "GET",    "/users/me/alert-preferences",                           "users:read",         R, "user_self_service"],
    ["me_alert_preferences_update",         "PATCH",  "/users/me/alert-preferences",                           "users:write",        W, "user_self_service"],
    ["saved_views_list",                    "GET",    "/users/me/saved-views",                                 "users:read",         R, "saved_views"],
    ["saved_view_create",                   "POST",   "/users/me/saved-views",                                 "users:write",        W, "saved_views"],
    ["saved_view_get",                      "GET",    "/users/me/saved-views/{view_id}",                       "users:read",         R, "saved_views"],
    ["saved_view_update",                   "PATCH",  "/users/me/saved-views/{view_id}",                       "users:write",        W, "saved_views"],
    ["saved_view_delete",                   "DELETE", "/users/me/saved-views/{view_id}",                       "users:write",        W, "saved_views"],
    ["custom_dashboards_list",              "GET",    "/users/me/custom-dashboards",                           "users:read",         R, "custom_dashboards"],
    ["custom_dashboard_create",             "POST",   "/users/me/custom-dashboards",                           "users:write",        W, "custom_dashboards"],
    ["custom_dashboard_get",                "GET",    "/users/me/custom-dashboards/{dashboard_id}",            "users:read",         R, "custom_dashboards"],
    ["custom_dashboard_update",             "PATCH",  "/users/me/custom-dashboards/{dashboard_id}",            "users:write",        W, "custom_dashboards"],
    ["custom_dashboard_delete",             "DELETE", "/users/me/custom-dashboards/{dashboard_id}",            "users:write",        W, "custom_dashboards"],
    ["custom_dashboard_sharing_update",     "PUT",    "/users/me/custom-dashboards/{dashboard_id}/sharing",    "users:write",        W, "custom_dashboards"],
    ["rgpd_export_create",                  "POST",   "/users/me/rgpd/export",                                 "users:read",         R, "rgpd_export"],
    ["rgpd_export_get",                     "GET",    "/users/me/rgpd/export/{export_id}",                     "users:read",         R, "rgpd_export"],
    ["rgpd_inventory_get",                  "GET",    "/users/me/rgpd/inventory",                              "users:read",         R, "rgpd_inventory"],
    ["rgpd_erasure_request",                "POST",   "/users/me/rgpd/erasure",                                "users:write",        W, "rgpd_erasure"],
  ],
  settings: [
    ["settings_business_get",               "GET",    "/settings/business",                                    "settings:read",      R],
    ["settings_business_update",            "PATCH",  "/settings/business",                                    "settings:write",     W],
    ["settings_reporting_get",              "GET",    "/settings/reporting",                                   "settings:read",      R],
    ["settings_reporting_update",           "PATCH",  "/settings/reporting",                                   "settings:write",     W],
    ["settings_branding_get",               "GET",    "/settings/branding",                                    "settings:read",      R],
    ["settings_branding_update",            "PATCH",  "/settings/branding",                                    "settings:write",     W],
  ],
  search: [
    ["search",                              "GET",    "/search",                                               "search:read",        R],
    ["search_documents",                    "POST",   "/search/documents",                                     "search:read",        R],
  ],
  alerts: [
    ["alerts_list",                         "GET",    "/alerts",                                               "alerts:read",        R],
    ["alert_get",                           "GET",    "/alerts/{alert_id}",                                    "alerts:read",        R],
    ["alert_acknowledge",                   "POST",   "/alerts/{alert_id}/acknowledge",                        "alerts:write",       W],
    ["alert_resolve",                       "POST",   "/alerts/{alert_id}/resolve",                            "alerts:write",       W],
    ["alert_postpone",                      "POST",   "/alerts/{alert_id}/postpone",                           "alerts:write",       W],
    ["alert_false_positive",                "POST",   "/alerts/{alert_id}/false-positive",                     "alerts:write",       W],
    ["notifications_list",                  "GET",    "/notifications",                                        "notifications:read", R],
    ["notifications_unread_count",          "GET",    "/notifications/unread-count",                           "notifications:read", R],
    ["notification_mark_read",              "POST",   "/notifications/{notification_id}/read",                 "notifications:write", W],
    ["notifications_mark_all_read",         "POST",   "/notifications/read-all",                               "notifications:write", W],
  ],
  calendar: [
    ["calendar_list",                       "GET",    "/calendar/events",                                      "calendar:read",      R],
    ["calendar_event_create",               "POST",   "/calendar/events",                                      "calendar:write",     W],
    ["calendar_event_get",                  "GET",    "/calendar/events/{event_id}",                           "calendar:read",      R],
    ["calendar_event_update",               "PATCH",  "/calendar/events/{event_id}",                           "calendar:write",     W],
    ["calendar_event_delete",               "DELETE", "/calendar/events/{event_id}",                           "calendar:write",     W],
    ["calendar_event_accept",               "POST",   "/calendar/events/{event_id}/accept",                    "calendar:write",     W],
    ["calendar_event_reject",               "POST",   "/calendar/events/{event_id}/reject",                    "calendar:write",     W],
  ],
  siren: [
    ["siren_get",                           "GET",    "/enrichment/siren/{siren}",                             "operateurs:read",    R],
    ["siren_validate",                      "GET",    "/enrichment/siren/{siren}/validate",                    "operateurs:read",    R],
    ["siren_resolve",                       "POST",   "/enrichment/siren/{siren}/resolve",                     "operateurs:write",   W],
    ["siren_cache_delete",                  "DELETE", "/enrichment/siren/{siren}/cache",                       "operateurs:write",   W],
  ],
  repayments: [
    ["repayment_schedule_get",              "GET",    "/operations/{operation_id}/repayment-schedule",         "operations:read",    R],
    ["repayment_schedule_put",              "PUT",    "/operations/{operation_id}/repayment-schedule",         "operations:write",   W],
    ["repayments_list",                     "GET",    "/operations/{operation_id}/repayments",                 "operations:read",    R],
    ["repayment_create",                    "POST",   "/operations/{operation_id}/repayments",                 "operations:write",   W],
    ["repayment_update",                    "PATCH",  "/operations/{operation_id}/repayments/{repayment_id}",  "operations:write",   W],
  ],
  reporting: [
    ["reports_inrev",                       "GET",    "/reports/inrev",                                        "reporting:read",     R],
    ["report_templates_list",               "GET",    "/reports/templates",                                    "reporting:read",     R],
    ["report_template_create",              "POST",   "/reports/templates",                                    "reporting:write",    W],
    ["report_template_get",                 "GET",    "/reports/templates/{template_id}",                      "reporting:read",     R],
    ["report_template_update",              "PATCH",  "/reports/templates/{template_id}",                      "reporting:write",    W],
    ["report_template_preview",             "POST",   "/reports/templates/{template_id}/preview",              "reporting:read",     R],
    ["report_template_export",              "GET",    "/reports/templates/{template_id}/export",               "reporting:read",     R],
  ],
  workflows: [
    ["workflow_presets_list",               "GET",    "/workflows/presets",                                    "workflows:read",     R],
    ["workflow_preset_get",                 "GET",    "/workflows/presets/{preset_key}",                       "workflows:read",     R],
    ["workflow_definitions_list",           "GET",    "/workflows/definitions",                                "workflows:read",     R],
    ["workflow_definition_create",          "POST",   "/workflows/definitions",                                "workflows:write",    W],
    ["workflow_definition_get",             "GET",    "/workflows/definitions/{workflow_key}",                  "workflows:read",     R],
    ["workflow_definition_update",          "PATCH",  "/workflows/definitions/{workflow_key}",                  "workflows:write",    W],
    ["workflow_definition_delete",          "DELETE", "/workflows/definitions/{workflow_key}",                  "workflows:write",    W],
    ["workflow_definition_toggle",          "POST",   "/workflows/definitions/{workflow_key}/toggle",           "workflows:write",    W],
    ["workflow_run",                        "POST",   "/workflows/definitions/{workflow_key}/executions",       "workflows:write",    W],
    ["workflow_executions_list",            "GET",    "/workflows/executions",                                 "workflows:read",     R],
    ["workflow_execution_get",              "GET",    "/workflows/executions/{execution_id}",                  "workflows:read",     R],
    ["workflow_history_list",               "GET",    "/workflows/history",                                    "workflows:read",     R],
    ["workflow_recommendations_preview",    "POST",   "/workflows/recommendations/preview",                    "workflows:read",     R],
    ["workflow_create_from_recommendation", "POST",   "/workflows/recommendations/{recommendation_id}/workflow", "workflows:write",  W],
  ],
  ai_extraction: [
    ["extraction_job_create",               "POST",   "/documents/{document_id}/extraction-jobs",              "ai_extraction:write", W],
    ["extraction_jobs_list",                "GET",    "/ai-extraction/jobs",                                   "ai_extraction:read", R],
    ["extraction_job_get",                  "GET",    "/ai-extraction/jobs/{job_id}",                          "ai_extraction:read", R],
    ["extraction_job_results",              "GET",    "/ai-extraction/jobs/{job_id}/results",                  "ai_extraction:read", R],
    ["extraction_job_cancel",               "POST",   "/ai-extraction/jobs/{job_id}/cancel",                   "ai_extraction:write", W],
  ],
  tasks: [
    ["tasks_board",                         "GET",    "/tasks/board",                                          "tasks:read",         R],
    ["operation_tasks_list",                "GET",    "/operations/{operation_id}/tasks",                      "tasks:read",         R],
    ["task_create",                         "POST",   "/operations/{operation_id}/tasks",                      "tasks:write",        W],
    ["task_update",                         "PATCH",  "/tasks/{task_id}",                                      "tasks:write",        W],
    ["task_delete",                         "DELETE", "/tasks/{task_id}",                                      "tasks:write",        W],
    ["tasks_reorder",                       "POST",   "/tasks/reorder",                                        "tasks:write",        W],
    ["task_labels_list",                    "GET",    "/tasks/labels",                                         "tasks:read",         R],
    ["task_label_create",                   "POST",   "/tasks/labels",                                         "tasks:write",        W],
    ["task_label_update",                   "PATCH",  "/tasks/labels/{label_id}",                              "tasks:write",        W],
  ],
};

/** One operation of the contract: what the export and the pipeline need to know about it. */
export interface ContractOperation {
  id: string;
  family: FamilyTag;
  method: HttpMethod;
  /** Relative to the base address (`/v1`), placeholders in braces. */
  path: string;
  /** `family:read|write`; null for the token exchange, which needs no bearer. */
  scope: string | null;
  kind: OperationKind;
  /** Delegated capability: set on `/users/me*` operations only (spec part 5). */
  capability?: Capability;
}

/** The 158 operations, grouped by family in the spec's order. */
export const CONTRACT_TABLE: readonly ContractOperation[] = Object.entries(ROWS).flatMap(
  ([family, rows]) =>
    rows.map(([id, method, path, scope, kind, capability]) => ({
      id,
      family: family as FamilyTag,
      method,
      path,
      scope,
      kind,
      ...(capability ? { capability } : {}),
    })),
);

/**
 * Operations whose method and path the spec shows (part 4); every other path is the sandbox's
 * choice, marked as such in docs/sandbox.md's route table. `siren_validate` has its path shown, its method chosen.
 */
export const PATHS_SHOWN_BY_SPEC: ReadonlySet<string> = new Set([
  "auth_token",
  "operations_list",
  "calendar_list",
  "reports_inrev",
  "notifications_unread_count",
  "spvs_list",
  "operators_list",
  "siren_get",
  "siren_resolve",
  "taxonomies_get",
  "field_definitions_list",
  "field_definition_get",
  "workflow_recommendations_preview",
  "me_get",
  "saved_views_list",
  "saved_view_create",
  "custom_dashboards_list",
  "custom_dashboard_create",
  "rgpd_export_create",
  "rgpd_inventory_get",
  "rgpd_erasure_request",
]);

/** The scope families keys are granted: `<family>:read|write` (spec part 5). */
export const SCOPE_FAMILIES: readonly string[] = [
  ...new Set(CONTRACT_TABLE.flatMap((op) => (op.scope ? [op.scope.split(":")[0] ?? ""] : []))),
];

const ORDER = new Map(CONTRACT_TABLE.map((op, i) => [op.id, i]));

/** Operations in the table's order (family by family); ids it lacks go last. */
export function inContractOrder<T extends { id: string }>(operations: readonly T[]): T[] {
  return [...operations].sort(
    (a, b) => (ORDER.get(a.id) ?? ORDER.size) - (ORDER.get(b.id) ?? ORDER.size),
  );
}
