import { DEMO_KEYS, serviceAccount } from "../keys.js";
import type { ImportJob } from "../models/operations.js";
import type { FamilySeed } from "./index.js";

/** An import job as the sandbox keeps it: the job, and the rows it will apply. */
export interface ImportJobRecord extends ImportJob {
  rows: unknown[];
}

export interface OperationsData {
  operationImports: ImportJobRecord[];
}

/**
 * How an import job moves with the sandbox's clock, so that a client can watch it and a test
 * can predict it: queued for QUEUE_MS, then running at ROWS_PER_SECOND, then finished.
 */
export const IMPORT_QUEUE_MS = 2_000;
export const IMPORT_ROWS_PER_SECOND = 20;

export function importTimeline(createdAtMs: number, rows: number) {
  const startsAt = createdAtMs + IMPORT_QUEUE_MS;
  const runMs = Math.max(1, Math.ceil(rows / IMPORT_ROWS_PER_SECOND)) * 1_000;
  return { startsAt, finishesAt: startsAt + runMs };
}

type Outcome = Pick<ImportJob, "result" | "errors">;

/**
 * Past imports from the portfolio management system, all finished: two that succeeded, one
 * refused for rows that broke the rules, one `create_only` that met known ids. Their errors
 * name real operations.
 */
export const seedOperations: FamilySeed<OperationsData> = {
  family: "operations",
  seed(data, { random, at }) {
    const synced = data.operations.filter((o) => o.external_id !== null);
    const closed = synced.find((o) => o.status === "cloturee") ?? synced[0];
    const live = synced.filter((o) => o.status === "travaux");
    const job = (
      daysAgo: number,
      sourceName: string,
      mode: ImportJob["mode"],
      rows: number,
      outcome: Outcome,
    ): ImportJobRecord => {
      const createdAt = at(-daysAgo, random.int(0, 480));
      const { startsAt, finishesAt } = importTimeline(Date.parse(createdAt), rows);
      return {
        id: random.uuid(),
        status: outcome.result ? "succeeded" : "failed",
        source_name: sourceName,
        mode,
        total_rows: rows,
        processed_rows: rows,
        ...outcome,
        created_by: serviceAccount(DEMO_KEYS.full),
        created_at: createdAt,
        started_at: new Date(startsAt).toISOString(),
        finished_at: new Date(finishesAt).toISOString(),
        expected_finish_at: null,
        rows: [],
      };
    };
    const error = (
      row: number,
      externalId: string | null,
      reasonCode: string,
      message: string,
    ) => ({
      row,
      external_id: externalId ?? "",
      reason_code: reasonCode,
      message,
    });
    const operationImports = [
      job(41, "export_pms_trimestriel.csv", "upsert", 48, {
        result: { created: 2, updated: 40, unchanged: 6 },
        errors: [],
      }),
      job(12, "export_pms_mensuel.csv", "upsert", 52, {
        result: null,
        errors: [
          error(
            17,
            closed?.external_id ?? null,
            "invalid_transition",
            `Operation ${closed?.id} is cloturee: no sequence of allowed moves leads to travaux.`,
          ),
          error(
            33,
            live[0]?.external_id ?? null,
            "reference_not_found",
            "spv_id: names no record of this entity",
          ),
        ],
      }),
      job(4, "reprise_historique.csv", "create_only", 6, {
        result: null,
        errors: live
          .slice(1, 3)
          .map((o, i) =>
            error(
              i * 2,
              o.external_id,
              "external_id_taken",
              `External id ${o.external_id} is already operation ${o.id}.`,
            ),
          ),
      }),
      job(1, "export_pms_mensuel_corrige.csv", "upsert", 52, {
        result: { created: 0, updated: 45, unchanged: 7 },
        errors: [],
      }),
    ];
    return { operationImports };
  },
};
