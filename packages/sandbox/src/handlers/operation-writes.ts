import { randomUUID } from "node:crypto";
import { z } from "zod";
import { PHASE_BY_STATUS } from "../data/demo.js";
import type { ACTIVE_OPERATION_STATUSES, CLOSED_OPERATION_STATUSES } from "../data/taxonomies.js";
import { date, type Json, type JsonObject, jsonObject } from "../models/common.js";
import type { Operation } from "../models/operations.js";
import type { Spv } from "../models/structures.js";
import { fromCents, toCents } from "../money.js";
import { type FieldError, invalid, notFound, Problem } from "../problem.js";
import type { SandboxState } from "../state.js";
import { assertReachable, assertTransition, type Transitions } from "../transitions.js";
import { uuid } from "../validation.js";
import { checkBusinessData, checkCodes } from "./business-data.js";
import { checkLinks, lowerId } from "./links.js";
import {
  differs,
  externalId,
  isoAt,
  mergeObject,
  requireChanges,
  sentFields,
} from "./mutations.js";
import { sameName } from "./pagination.js";

/**
 * Creating, changing and synchronising operations: one set of rules for POST, PATCH, PUT by
 * external id and import rows, so that an import refuses exactly what the routes refuse.
 */

type OperationStatus =
  | (typeof ACTIVE_OPERATION_STATUSES)[number]
  | (typeof CLOSED_OPERATION_STATUSES)[number];

/**
 * The operation lifecycle over the `operation_status` codes (spec part 3 names the active
 * statuses, shows no moves: the table is the sandbox's). Each move is named after the status it
 * leads to. Closed and abandoned operations are final.
 */
export const OPERATION_MOVES: Transitions<OperationStatus, OperationStatus> = {
  sourcing: ["instruction"],
  instruction: ["sourcing"],
  travaux: ["instruction"],
  commercialisation: ["travaux"],
  livraison: ["travaux", "commercialisation"],
  remboursee: ["livraison"],
  cloturee: ["remboursee"],
  abandonnee: ["sourcing", "instruction"],
};

// Amounts in euros with cents, as decimal strings or numbers (spec part 2, financial snapshot).
const CENTS = /^\d{1,13}(\.\d{1,2})?$/;
const SIGNED_CENTS = /^-?\d{1,13}(\.\d{1,2})?$/;
const amountOf = (pattern: RegExp) => {
  const message = "must be an amount in euros, at most 2 decimals, as a string or a number";
  return z.union([
    z.string().regex(pattern, message),
    z.number().refine((n) => pattern.test(String(n)), message),
  ]);
};
const amount = amountOf(CENTS);
const signedAmount = amountOf(SIGNED_CENTS);

/** Spec part 2: the financial snapshot, with the keys the sandbox knows and no currency field. */
const kpiSnapshotInput = z.strictObject({
  as_of: date.nullish(),
  /** One period for NOI and debt service, so that the two are always aligned. */
  periode: z.string().trim().min(1).max(50).nullish(),
  crd_total: amount.nullish(),
  crd_senior: amount.nullish(),
  crd_mezzanine: amount.nullish(),
  valeur_venale: amount.nullish(),
  noi: signedAmount.nullish(),
  service_dette: amount.nullish(),
  /** Loan to value, in percent. */
  ltv: z.union([z.string().regex(/^\d{1,4}(\.\d{1,2})?$/), z.number().min(0).max(9999)]).nullish(),
  dscr: z.number().min(0).max(1000).nullish(),
});
type KpiInput = z.output<typeof kpiSnapshotInput>;

const financialSummaryInput = z.strictObject({
  montant_engage: amount.optional(),
  montant_appele: amount.optional(),
  montant_rembourse: amount.optional(),
  /** Annual rate, in percent. */
  taux_annuel: z
    .string()
    .regex(/^\d{1,2}(\.\d{1,4})?$/, "must be a rate in percent, as a string")
    .optional(),
  duree_mois: z.int().min(1).max(600).optional(),
  date_investissement: date.nullish(),
  date_echeance: date.nullish(),
});

const code = z.string().min(1).max(180);
const operationFields = {
  name: z.string().trim().min(1).max(255),
  status: code,
  description: z.string().max(5000).nullish(),
  spv_id: uuid.nullish(),
  operateur_id: uuid.nullish(),
  type_investissement: code.nullish(),
  type_operation: code.nullish(),
  classe_actif: code.nullish(),
  sous_classe_actif: z.string().trim().min(1).max(100).nullish(),
  statut_interne: code.nullish(),
  statut_operationnel: z.array(code).max(20).nullish(),
  financial_summary: financialSummaryInput.optional(),
  data: jsonObject.optional(),
  kpi_snapshot: kpiSnapshotInput.optional(),
};
const { status: _status, ...withoutStatus } = operationFields;
const version = z.int().min(1);

export const operationCreateBody = z.strictObject({
  ...withoutStatus,
  status: code.optional(),
  external_id: externalId.nullish(),
});
export const operationUpdateBody = z.strictObject({
  version,
  ...z.object(operationFields).partial().shape,
});
export const operationSyncBody = z.strictObject({
  ...withoutStatus,
  status: code.optional(),
  version: version.optional(),
});
export const importRowSchema = z.strictObject({
  external_id: externalId,
  ...operationSyncBody.shape,
});
export type ImportRow = z.output<typeof importRowSchema>;

type OperationInput = Partial<z.output<typeof operationUpdateBody>> & {
  external_id?: string | null;
};

/** How a write reaches the operation: its rules on status moves and versions differ. */
export type WriteMode = "create" | "update" | "sync";

export interface PreparedWrite {
  next: Operation;
  /** Null for a creation. */
  current: Operation | null;
  changed: boolean;
}

/** 409 `spv_in_liquidation`: a wound-up SPV takes no new operation. */
export function assertSpvTakesOperations(spv: Spv): void {
  if (spv.status === "in_liquidation")
    throw new Problem(409, `SPV ${spv.id} is in liquidation: it takes no new operation.`, {
      reasonCode: "spv_in_liquidation",
    });
}

/** A write changed the operation: its version goes up (spec part 9). */
export function touchOperation(operation: Operation, nowMs: number): void {
  operation.version += 1;
  operation.updated_at = isoAt(nowMs);
}

export function findByExternalId(state: SandboxState, id: string): Operation | undefined {
  return state.data.operations.find((o) => o.external_id === id);
}

export function operationByExternalId(state: SandboxState, id: string): Operation {
  const operation = findByExternalId(state, id);
  if (!operation) throw notFound("operation", `external ${id}`, "operation_not_found");
  return operation;
}

/**
 * The operation as the write would leave it, or the refusal: nothing is changed here, so an
 * import can check every row before it applies any. `claimed` holds the names earlier rows of
 * the same import take.
 */
export function prepareOperation(
  state: SandboxState,
  current: Operation | null,
  body: OperationInput,
  mode: WriteMode,
  options: { at: string; externalId?: string | null; claimed?: Set<string> },
): PreparedWrite {
  const what = `Operation ${current?.id ?? "(new)"}`;
  if (mode === "update") requireChanges(body, ["version"]);
  checkVersion(current, body.version, what);
  const { version: _v, external_id: _e, ...sent } = sentFields(body);
  checkOperationCodes(state, sent);
  checkLinks(state, sent);
  const base = current ?? blankOperation(options.at, options.externalId ?? null);
  if (!current && options.externalId && findByExternalId(state, options.externalId)) {
    throw new Problem(409, `External id ${options.externalId} is already an operation's.`, {
      reasonCode: "external_id_taken",
    });
  }
  const status = (sent.status ?? base.status) as OperationStatus;
  if (current && status !== current.status) {
    const from = current.status as OperationStatus;
    if (mode === "update") assertTransition(OPERATION_MOVES, status, from, what);
    else assertReachable(OPERATION_MOVES, from, status, what);
  }
  const spvId = sent.spv_id === undefined ? base.spv_id : (lowerId(sent.spv_id) ?? null);
  const spv = spvId === null ? undefined : state.data.spvs.find((s) => s.id === spvId);
  if (spv && spvId !== current?.spv_id) assertSpvTakesOperations(spv);
  const name = sent.name ?? base.name;
  checkNameFree(state, current, name, options.claimed);
  if (sent.data) checkBusinessData(state, "operation", sent.data);
  const next: Operation = {
    ...mergedOperation(base, sent),
    name,
    status,
    phase: PHASE_BY_STATUS[status] ?? base.phase,
    spv_id: spvId,
    fond_id: spv?.fond_id ?? null,
  };
  options.claimed?.add(name.toLowerCase());
  return { next, current, changed: !current || differs(next, current, ["updated_at", "version"]) };
}

/** 409 `version_conflict` when the change was written against another version. */
function checkVersion(current: Operation | null, version: number | undefined, what: string) {
  if (current && version !== undefined && version !== current.version) {
    throw new Problem(
      409,
      `${what} is at version ${current.version}, not ${version}: read it again, then resend the change.`,
      { reasonCode: "version_conflict" },
    );
  }
}

type SentOperation = Omit<Partial<OperationInput>, "version" | "external_id">;

/** Each coded field holds a code of its taxonomy. */
function checkOperationCodes(state: SandboxState, sent: SentOperation): void {
  checkCodes(state, [
    { field: "status", dimension: "operation_status", value: sent.status },
    { field: "type_investissement", dimension: "investment_type", value: sent.type_investissement },
    { field: "type_operation", dimension: "operation_type", value: sent.type_operation },
    { field: "classe_actif", dimension: "asset_class", value: sent.classe_actif },
    { field: "statut_interne", dimension: "internal_status", value: sent.statut_interne },
    {
      field: "statut_operationnel",
      dimension: "operational_status",
      value: sent.statut_operationnel,
    },
  ]);
}

/** 409 `operation_name_taken`: names are unique, case aside, imports' earlier rows included. */
function checkNameFree(
  state: SandboxState,
  current: Operation | null,
  name: string,
  claimed: Set<string> | undefined,
): void {
  if (current && sameName(current.name, name)) return;
  const other = state.data.operations.find((o) => o !== current && sameName(o.name, name));
  if (other || claimed?.has(name.toLowerCase())) {
    throw new Problem(409, `An operation is already named ${name}.`, {
      reasonCode: "operation_name_taken",
    });
  }
}

/** The sent fields over the operation; its business data, KPIs and figures merged key by key. */
function mergedOperation(base: Operation, sent: SentOperation): Operation {
  return {
    ...base,
    ...sent,
    operateur_id:
      sent.operateur_id === undefined ? base.operateur_id : (lowerId(sent.operateur_id) ?? null),
    data: sent.data ? mergeObject(base.data, sent.data) : base.data,
    kpi_snapshot: sent.kpi_snapshot
      ? mergeKpi(base.kpi_snapshot, sent.kpi_snapshot)
      : base.kpi_snapshot,
    financial_summary: sent.financial_summary
      ? mergeFinancial(base.financial_summary, sent.financial_summary)
      : base.financial_summary,
  };
}

/**
 * Applies a prepared write: a creation joins the data, a change raises the version. A new
 * status is recorded in the operation's history, which its timeline shows.
 */
export function commitOperation(
  state: SandboxState,
  write: PreparedWrite,
  nowMs: number,
  by: string,
): Operation {
  const { next, current, changed } = write;
  if (!current) {
    state.data.operations.push(next);
    recordStatus(state, next.id, null, next.status, nowMs, by);
    return next;
  }
  if (changed) {
    const from = current.status;
    Object.assign(current, next);
    touchOperation(current, nowMs);
    if (current.status !== from) recordStatus(state, current.id, from, current.status, nowMs, by);
  }
  return current;
}

function recordStatus(
  state: SandboxState,
  operationId: string,
  from: string | null,
  to: string,
  nowMs: number,
  by: string,
): void {
  state.data.statusChanges.push({
    id: randomUUID(),
    operation_id: operationId,
    from,
    to,
    at: new Date(nowMs).toISOString(),
    by,
  });
}

function blankOperation(at: string, externalIdValue: string | null): Operation {
  return {
    id: randomUUID(),
    relationship_status: "attached",
    relationship_label: "Rattachée",
    name: "",
    status: "sourcing",
    phase: PHASE_BY_STATUS.sourcing ?? "origination",
    version: 1,
    created_at: at,
    updated_at: at,
    spv_id: null,
    type_investissement: null,
    type_operation: null,
    classe_actif: null,
    statut_interne: "nominal",
    statut_operationnel: null,
    sous_classe_actif: null,
    financial_summary: {
      devise: "EUR",
      montant_engage: "0.00",
      montant_appele: "0.00",
      montant_rembourse: "0.00",
      encours: "0.00",
      taux_annuel: null,
      duree_mois: null,
      date_investissement: null,
      date_echeance: null,
    },
    reporting_summary: {
      frequence: "trimestrielle",
      dernier_reporting: null,
      prochain_reporting: null,
      statut_reporting: "non_applicable",
    },
    description: null,
    operateur_id: null,
    fond_id: null,
    data: {},
    kpi_snapshot: { as_of: null },
    external_id: externalIdValue,
  };
}

const asText = (value: string | number) => (typeof value === "number" ? String(value) : value);

/**
 * Spec part 2, financial snapshot: KPI keys live here; amounts are kept as decimal strings
 * whichever way they came; senior and mezzanine debt must add up to the total.
 */
function mergeKpi(current: JsonObject, sent: KpiInput): JsonObject {
  const patch: Record<string, Json> = {};
  for (const [key, value] of Object.entries(sentFields(sent))) {
    if (value === null || value === undefined) patch[key] = null;
    else patch[key] = key === "dscr" ? (value as number) : asText(value as string | number);
  }
  const merged: JsonObject = { ...current, ...patch };
  const { crd_total: total, crd_senior: senior, crd_mezzanine: mezzanine } = merged;
  if (typeof total === "string" && typeof senior === "string" && typeof mezzanine === "string") {
    if (toCents(senior) + toCents(mezzanine) !== toCents(total)) {
      throw invalid(
        [
          {
            field: "kpi_snapshot.crd_total",
            rule: "crd_senior + crd_mezzanine",
            message: `must equal crd_senior + crd_mezzanine (${fromCents(toCents(senior) + toCents(mezzanine))}), in the same unit`,
          },
        ],
        "kpi_inconsistent",
      );
    }
  }
  return merged;
}

/** The summary's amounts: `encours` is what was called and not repaid, never sent. */
function mergeFinancial(
  current: JsonObject,
  sent: z.output<typeof financialSummaryInput>,
): JsonObject {
  const patch = Object.fromEntries(
    Object.entries(sentFields(sent)).map(([key, value]) => [
      key,
      typeof value === "number" && key !== "duree_mois" ? String(value) : (value as Json),
    ]),
  );
  const merged: JsonObject = { ...current, ...patch };
  const cents = (key: string) => toCents(merged[key] ?? "0.00");
  const errors: FieldError[] = [];
  if (cents("montant_appele") > cents("montant_engage"))
    errors.push({
      field: "financial_summary.montant_appele",
      rule: "at most montant_engage",
      message: "cannot exceed the committed amount",
    });
  if (cents("montant_rembourse") > cents("montant_appele"))
    errors.push({
      field: "financial_summary.montant_rembourse",
      rule: "at most montant_appele",
      message: "cannot exceed the called amount",
    });
  const start = merged.date_investissement;
  const end = merged.date_echeance;
  if (typeof start === "string" && typeof end === "string" && end < start)
    errors.push({
      field: "financial_summary.date_echeance",
      rule: "on or after date_investissement",
      message: "a maturity cannot come before the investment",
    });
  if (errors.length > 0) throw invalid(errors, "amounts_inconsistent");
  merged.encours = fromCents(cents("montant_appele") - cents("montant_rembourse"));
  return merged;
}
