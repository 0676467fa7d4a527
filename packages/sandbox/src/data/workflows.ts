import type { JsonObject } from "../models/common.js";
import type {
  WorkflowDefinition,
  WorkflowHistoryEntry,
  WorkflowPreset,
  WorkflowState,
} from "../models/workflows.js";
import {
  type ExecutionRecord,
  historyEntry,
  nextRun,
  queueExecution,
  scheduleMode,
  settleFinished,
} from "../workflows.js";
import { DEFAULT_SCHEDULES, PRESETS } from "./demo.js";
import type { FamilySeed, SandboxData } from "./index.js";
import { DEMO_USERS } from "./users.js";

const DAY_MS = 86_400_000;

export interface WorkflowsData {
  workflowPresets: WorkflowPreset[];
  workflowExecutions: ExecutionRecord[];
  workflowHistory: WorkflowHistoryEntry[];
}

/** What each preset configures by default (the sandbox's choice; README). */
const DEFAULT_CONFIGURATIONS: Record<(typeof PRESETS)[number][0], JsonObject> = {
  covenant_monitoring: { ltv_max_pct: "55.00", dscr_min: "0.85" },
  reporting_reminder: { days_late: 5, channel: "email" },
  construction_progress_check: { tolerance_pct: "10.00" },
  sales_pace_alert: { min_reservations_per_month: 2 },
  maturity_followup: { days_before: 90 },
  kyc_refresh: { documents: ["kbis", "statuts", "beneficiaires_effectifs"] },
};

interface DefinitionSeed {
  key: string;
  preset: (typeof PRESETS)[number][0];
  name: string;
  origin: "system" | "custom";
  /** The state before its runs; a failing run puts it in error by itself. */
  state: WorkflowState;
  /** A definition the entity must keep: neither edited, toggled nor deleted. */
  mandatory?: boolean;
  schedule?: string;
  operationIds?: string[];
  createdDaysAgo: number;
  /** How many of its last scheduled slots it ran in (system definitions). */
  scheduledRuns?: number;
  /** Days ago someone ran it by hand, oldest first (custom definitions). */
  manualRuns?: number[];
  /** Days ago it was disabled, after its runs. */
  disabledDaysAgo?: number;
}

/**
 * The presets catalogue, and the definitions the entity runs: system ones on a schedule (one
 * the entity may not touch), custom ones in every other state (inactive, in error after a
 * failed run, a draft), with their past executions and history. The executions were run by
 * the sandbox's own rules, so their results agree with the data.
 */
export const seedWorkflows: FamilySeed<WorkflowsData> = {
  family: "workflows",
  seed(data, { random, at }) {
    const workflowPresets: WorkflowPreset[] = PRESETS.map(
      ([key, name, family, types, effect, mode]) => ({
        key,
        name,
        expected_effect: effect,
        processing_family: family,
        processing_types: [...types],
        business_scope: family === "compliance" ? "operateurs" : "operations",
        schedule_mode: mode,
        default_schedule: DEFAULT_SCHEDULES[mode],
        default_configuration: DEFAULT_CONFIGURATIONS[key],
      }),
    );
    const out: WorkflowsData = { workflowPresets, workflowExecutions: [], workflowHistory: [] };
    const world = { ...data, ...out } as SandboxData;
    const ids = (items: { id: string }[], count: number) =>
      random
        .shuffle(items)
        .slice(0, count)
        .map((o) => o.id);
    const watched = data.operations.filter(
      (o) => o.statut_interne !== "nominal" && o.phase !== "terminee",
    );
    const inStatus = (status: string) => data.operations.filter((o) => o.status === status);
    const seeds: DefinitionSeed[] = [
      {
        key: "wf_covenants_dette_senior",
        preset: "covenant_monitoring",
        name: "Surveillance des covenants – dette senior",
        origin: "system",
        state: "active",
        operationIds: ids(watched, 4),
        createdDaysAgo: 120,
        scheduledRuns: 3,
      },
      {
        key: "wf_relance_reportings",
        preset: "reporting_reminder",
        name: "Relance des reportings trimestriels",
        origin: "system",
        state: "active",
        createdDaysAgo: 200,
        scheduledRuns: 2,
      },
      {
        key: "wf_controle_lcb_ft",
        preset: "kyc_refresh",
        name: "Contrôle LCB-FT des opérateurs",
        origin: "system",
        state: "active",
        mandatory: true,
        createdDaysAgo: 400,
        scheduledRuns: 1,
      },
      {
        key: "wf_avancement_travaux",
        preset: "construction_progress_check",
        name: "Avancement des chantiers en travaux",
        origin: "custom",
        state: "active",
        operationIds: ids(inStatus("travaux"), 3),
        createdDaysAgo: 90,
        manualRuns: [40],
        disabledDaysAgo: 20,
      },
      {
        // One of its operations has since left the entity: its last run failed.
        key: "wf_rythme_commercialisation",
        preset: "sales_pace_alert",
        name: "Rythme de commercialisation – programmes en vente",
        origin: "custom",
        state: "active",
        operationIds: [...ids(inStatus("commercialisation"), 2), random.uuid()],
        createdDaysAgo: 60,
        manualRuns: [6],
      },
      {
        key: "wf_echeances_a_venir",
        preset: "maturity_followup",
        name: "Échéances des 12 prochains mois",
        origin: "custom",
        state: "draft",
        createdDaysAgo: 3,
      },
    ];

    const history = out.workflowHistory;
    const seedNow = Date.parse(at(0));
    // Past runs end before the business date, whatever the hour the sandbox starts at.
    const cutoff = Date.parse(at(-1));
    const pastSlots = (schedule: string, count: number): string[] => {
      const slots: string[] = [];
      for (let slot = nextRun(schedule, cutoff - 70 * DAY_MS); slot !== null; ) {
        if (Date.parse(slot) >= cutoff) break;
        slots.push(slot);
        slot = nextRun(schedule, Date.parse(slot));
      }
      return count === 0 ? [] : slots.slice(-count);
    };
    for (const seed of seeds) {
      const preset = workflowPresets.find((p) => p.key === seed.preset) as WorkflowPreset;
      const created = at(-seed.createdDaysAgo);
      const author = seed.origin === "system" ? "system" : DEMO_USERS.camille;
      const schedule = seed.schedule ?? preset.default_schedule;
      const definition: WorkflowDefinition = {
        key: seed.key,
        name: seed.name,
        description: preset.expected_effect,
        processing_family: preset.processing_family,
        schedule,
        enabled: seed.state === "active",
        is_custom: seed.origin === "custom",
        is_editable: !seed.mandatory,
        is_deletable: !seed.mandatory,
        can_toggle: !seed.mandatory,
        origin: seed.origin,
        business_scope: preset.business_scope,
        expected_effect: preset.expected_effect,
        processing_types: [...preset.processing_types],
        preset_key: preset.key,
        state: seed.state,
        schedule_mode: scheduleMode(schedule),
        configuration: {
          ...preset.default_configuration,
          ...(seed.operationIds ? { operation_ids: seed.operationIds } : {}),
        },
        metadata: { created_from: "preset", created_at: created, created_by: author },
        last_run_at: null,
        next_run_at: seed.state === "active" ? nextRun(schedule, seedNow) : null,
        last_error: null,
      };
      data.workflows.push(definition);
      history.push(historyEntry(random.uuid(), seed.key, "created", created, author));
      if (seed.state === "active")
        history.push(historyEntry(random.uuid(), seed.key, "enabled", created, author));
      const runs: Array<{ at: string; trigger: ExecutionRecord["trigger"] }> = [
        ...pastSlots(schedule, seed.scheduledRuns ?? 0).map((slot) => ({
          at: slot,
          trigger: "schedule" as const,
        })),
        ...(seed.manualRuns ?? []).map((daysAgo) => ({
          at: at(-daysAgo, -60),
          trigger: "manual" as const,
        })),
      ];
      for (const run of runs) {
        queueExecution(
          world,
          definition,
          {
            id: random.uuid(),
            trigger: run.trigger,
            by: run.trigger === "schedule" ? "system" : DEMO_USERS.camille,
            at: run.at,
          },
          random.uuid(),
        );
      }
      settleFinished(world, seedNow, () => random.uuid());
      if (seed.disabledDaysAgo !== undefined) {
        Object.assign(definition, { state: "inactive", enabled: false, next_run_at: null });
        history.push(
          historyEntry(random.uuid(), seed.key, "disabled", at(-seed.disabledDaysAgo), author),
        );
      }
    }
    // The definition an applied recommendation became (data/demo.ts) has its history too.
    for (const definition of data.workflows.filter(
      (w) => w.metadata.created_from === "recommendation",
    )) {
      const created = String(definition.metadata.created_at);
      history.push(
        historyEntry(random.uuid(), definition.key, "created", created, DEMO_USERS.camille, {
          details: { recommendation_id: definition.configuration.recommendation_id ?? null },
        }),
      );
    }
    return out;
  },
};
