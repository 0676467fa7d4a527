/**
 * The sandbox's records. Fields named by the spec (part 2) keep the spec's names and types;
 * the rest are the sandbox's choices, listed in the README.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface Entity {
  id: string;
  name: string;
  environment: string;
  currency: "EUR";
}

export interface Fund {
  id: string;
  name: string;
  strategy: string;
  vintage_year: number;
  currency: "EUR";
  target_size: string;
  status: "investing" | "harvesting" | "closed";
  created_at: string;
  updated_at: string;
}

export interface Spv {
  id: string;
  name: string;
  legal_form: string;
  siren: string;
  fond_id: string;
  status: "active" | "in_liquidation";
  external_id: string;
  created_at: string;
  updated_at: string;
}

export type OperatorType =
  | "promoteur"
  | "marchand_de_biens"
  | "asset_manager"
  | "fonciere"
  | "entrepreneur_general";

export interface Operator {
  id: string;
  data: JsonObject;
  source_extraction: boolean;
  litiges_en_cours: boolean;
  created_at: string;
  updated_at: string;
  name: string | null;
  siren: string | null;
  type: OperatorType | null;
  litiges_detail: string | null;
  responsable_interne: string | null;
  reputation_gouvernance_score: number | null;
  reputation_gouvernance_label: string | null;
  forme_societe_mere: string | null;
  siren_mere: string | null;
}

export interface Operation {
  id: string;
  relationship_status: "attached" | "pending_attachment";
  relationship_label: string;
  name: string;
  status: string;
  phase: string;
  version: number;
  created_at: string;
  updated_at: string;
  spv_id: string | null;
  type_investissement: string | null;
  type_operation: string | null;
  classe_actif: string | null;
  statut_interne: string | null;
  statut_operationnel: string[] | null;
  sous_classe_actif: string | null;
  financial_summary: JsonObject;
  reporting_summary: JsonObject;
  // Detail-only fields (GET /operations/{operation_id}).
  description: string | null;
  operateur_id: string | null;
  fond_id: string | null;
  data: JsonObject;
  kpi_snapshot: JsonObject;
}

export type DealStatus =
  | "sourcing"
  | "analyse"
  | "due_diligence"
  | "comite"
  | "closing"
  | "abandonne";

export interface Deal {
  id: string;
  name: string;
  status: DealStatus;
  created_at: string;
  updated_at: string;
  description: string | null;
  montant_estime: string | null;
  classe_actif: string | null;
  operateur_id: string | null;
  operation_id: string | null;
  responsable: string | null;
  date_sourcing: string | null;
  date_closing_prevue: string | null;
}

export interface IdempotencyReceipt {
  client_request_id: string;
  actor_id: string;
  capability: string;
  payload_digest: string;
  replayed: boolean;
}

export interface CalendarEvent {
  id: string;
  entity_id: string;
  title: string;
  description: string | null;
  event_date: string;
  event_type: string;
  operation_id: string | null;
  operateur_id: string | null;
  fond_id: string | null;
  spv_id: string | null;
  source: string;
  source_alert_id: string | null;
  confidence: number | null;
  accepted: boolean | null;
  idempotency_receipt: IdempotencyReceipt | null;
  created_at: string;
  updated_at: string;
}

export interface Note {
  id: string;
  operation_id: string;
  user_id: string;
  author_name: string;
  content: string;
  note_type: string;
  date: string;
  text: string;
  category: string;
  created_at: string;
  updated_at: string;
  description_i18n: Record<string, string> | null;
  source_created_at: string | null;
  source_updated_at: string | null;
  is_resolved: boolean;
  resolved_by: string | null;
  resolved_at: string | null;
}

export interface Notification {
  id: string;
  title: string;
  severity: "info" | "warning" | "critical";
  read: boolean;
  operation_id: string | null;
  created_at: string;
}

export type UserStatus = "approved" | "suspended" | "pending";

export interface User {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  display_name: string;
  job_title: string;
  status: UserStatus;
  read_only: boolean;
  locale: string;
  timezone: string;
  preferences: JsonObject;
  alert_preferences: JsonObject;
  created_at: string;
  updated_at: string;
}

export type SavedViewType = "operations" | "deals" | "operateurs";

export interface SortKey {
  sort_by: string;
  sort_order: "asc" | "desc";
}

export interface SavedView {
  id: string;
  user_id: string;
  name: string;
  type: SavedViewType;
  filters: JsonObject;
  columns: string[];
  sort: SortKey[];
  icon: string | null;
  color: string | null;
  is_default: boolean;
  created_at: string;
  updated_at: string;
}

export interface Dashboard {
  id: string;
  name: string;
  description: string | null;
  user_id: string;
  layout: JsonObject[];
  filters: JsonObject;
  is_shared: boolean;
  share_token: string | null;
  created_at: string;
  updated_at: string;
  default_scope: JsonObject | null;
  sharing: JsonObject | null;
  can_edit: boolean;
  can_manage: boolean;
}

export interface Recommendation {
  id: string;
  preset_key: string;
  title: string;
  rationale: string;
  processing_family: string;
  processing_types: string[];
  expected_effect: string;
  business_scope: string;
  schedule_mode: string;
  suggested_schedule: string;
  operation_ids: string[];
  confidence: number;
  status: "proposed" | "validated" | "applied";
  applied_workflow_key: string | null;
  created_at: string;
}

/** Field names are the sandbox's choice: the spec lists only their meanings, in this order. */
export interface WorkflowDefinition {
  key: string;
  name: string;
  description: string;
  processing_family: string;
  schedule: string;
  enabled: boolean;
  is_custom: boolean;
  is_editable: boolean;
  is_deletable: boolean;
  can_toggle: boolean;
  origin: "system" | "custom";
  business_scope: string;
  expected_effect: string;
  processing_types: string[];
  preset_key: string;
  state: "draft" | "active" | "inactive" | "error";
  schedule_mode: string;
  configuration: JsonObject;
  metadata: JsonObject;
  last_run_at: string | null;
  next_run_at: string | null;
  last_error: string | null;
}

export interface SirenRecord {
  siren: string;
  denomination: string;
  forme_juridique: string;
  code_naf: string;
  adresse: string;
  date_creation: string;
  etat_administratif: "actif" | "cesse";
  source: "local" | "cache" | "provider";
  fetched_at: string;
}

export interface TaxonomyValue {
  code: string;
  label: string;
  order: number;
  is_active_status?: boolean;
}

export interface TaxonomyDimension {
  dimension: string;
  label: string;
  values: TaxonomyValue[];
}

export interface FieldDefinition {
  key: string;
  label: string;
  description: string;
  applies_to: "operation" | "operateur";
  type: "string" | "integer" | "decimal" | "date" | "boolean" | "enum";
  unit: string | null;
  enum_values: string[] | null;
  availability: "available" | "unavailable" | "deprecated";
}
