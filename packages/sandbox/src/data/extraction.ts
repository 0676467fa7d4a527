import { defaultDefinitions, extractFields } from "../field-extraction.js";
import type { StoredDocument } from "../models/documents.js";
import type { ExtractionStatus, StoredExtractionJob } from "../models/extraction.js";
import { DEMO_USERS } from "./demo.js";
import type { DocumentsData } from "./documents.js";
import type { FamilySeed } from "./index.js";

export interface ExtractionData {
  extractionJobs: StoredExtractionJob[];
}

export const NO_TEXT_LAYER = {
  code: "no_text_layer",
  message: "The file has no text layer (a scan without OCR): nothing could be read.",
};

/**
 * Jobs on seeded documents in every state: finished ones with their results read from the
 * documents' text, a failure on a scan, a cancelled one, and a running and a queued one behind
 * the overnight backlog (they finish tomorrow morning, the seed's day after `today`).
 * Seeded after the documents (FAMILY_SEEDS order), whose collection it reads.
 */
export const seedExtraction: FamilySeed<ExtractionData> = {
  family: "ai_extraction",
  seed(data, { random, at }) {
    const { documents } = data as typeof data & Partial<DocumentsData>;
    if (!documents) throw new Error("the extraction seed runs after the documents seed");
    const open = documents.filter((d) => d.dataroom === null && d.file_status === "available");
    const reports = open.filter((d) => d.category === "reporting" && d.file.kind === "pdf");
    const accounts = open.filter((d) => d.category === "financier" && d.file.kind === "pdf");
    const scans = open.filter((d) => d.file.kind === "pdf" && d.text === "");
    const plan: Array<[StoredDocument | undefined, ExtractionStatus]> = [
      [reports[0], "succeeded"],
      [reports[1], "succeeded"],
      [reports[2], "succeeded"],
      [accounts[0], "succeeded"],
      [scans[0], "failed"],
      [reports[3], "cancelled"],
      [reports[4], "running"],
      [accounts[1], "queued"],
    ];
    const extractionJobs = plan.flatMap(([document, status], i): StoredExtractionJob[] => {
      if (!document) return [];
      const id = random.uuid();
      const targets = document.attachments.map((a) => a.target_type);
      const definitions = defaultDefinitions(data.fieldDefinitions, targets);
      const active = status === "queued" || status === "running";
      const created = active ? at(-1, 600 + i) : at(-random.int(2, 30), random.int(0, 500));
      const shifted = (minutes: number) =>
        new Date(Date.parse(created) + minutes * 60_000).toISOString();
      const starts = status === "queued" ? at(1) : shifted(1);
      const finishes = active ? at(1, 10 + i) : shifted(random.int(2, 6));
      const outcome =
        document.text === ""
          ? { error: NO_TEXT_LAYER }
          : { fields: extractFields(document.text, definitions, id) };
      const finished = status === "succeeded" || status === "failed" ? finishes : null;
      const cancelledAt = status === "cancelled" ? shifted(1) : null;
      return [
        {
          id,
          document_id: document.id,
          document_name: document.name,
          status,
          field_keys: definitions.map((d) => d.key),
          progress: status === "succeeded" ? 100 : status === "running" ? 40 : 0,
          estimated_completion_at: active ? finishes : null,
          error: status === "failed" ? NO_TEXT_LAYER : null,
          requested_by: random.pick([DEMO_USERS.camille, DEMO_USERS.thomas]),
          created_at: created,
          started_at: status === "queued" || status === "cancelled" ? null : starts,
          finished_at: finished ?? cancelledAt,
          updated_at: finished ?? cancelledAt ?? (status === "running" ? starts : created),
          starts_at: starts,
          finishes_at: finishes,
          outcome,
          dataroom_id: null,
        },
      ];
    });
    return { extractionJobs };
  },
};
