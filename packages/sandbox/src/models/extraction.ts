import { z } from "zod";
import { component, dateTime, pageOf, uuid } from "./common.js";
import { fieldDefinitionSchema } from "./taxonomies.js";

/** AI extraction jobs: fields and states not shown by the spec, the sandbox's choice (README). */

export const EXTRACTION_STATUSES = [
  "queued",
  "running",
  "succeeded",
  "failed",
  "cancelled",
] as const;
export type ExtractionStatus = (typeof EXTRACTION_STATUSES)[number];

export const extractionJobSchema = component(
  "ExtractionJob",
  z.object({
    id: uuid,
    document_id: uuid,
    /** Kept on the job: the document may be deleted once the job is over. */
    document_name: z.string(),
    status: z.enum(EXTRACTION_STATUSES),
    /** The field definitions (`GET /field-definitions`) the job looks for. */
    field_keys: z.array(z.string()),
    progress: z.int().min(0).max(100),
    /** When a queued or running job is expected to be over; null once it is. */
    estimated_completion_at: dateTime.nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    requested_by: z.string(),
    created_at: dateTime,
    started_at: dateTime.nullable(),
    finished_at: dateTime.nullable(),
    updated_at: dateTime,
  }),
);
export type ExtractionJob = z.output<typeof extractionJobSchema>;

export const extractionJobListSchema = component("ExtractionJobList", pageOf(extractionJobSchema));

export const extractedFieldSchema = z.object({
  field_key: z.string(),
  label: z.string(),
  type: fieldDefinitionSchema.shape.type,
  unit: z.string().nullable(),
  found: z.boolean(),
  /** Typed as the field definition says: decimals as strings, dates as YYYY-MM-DD. */
  value: z.union([z.string(), z.number(), z.boolean()]).nullable(),
  /** The line of the document the value was read from. */
  excerpt: z.string().nullable(),
  /** 0 to 1: how sure the extraction is; never a substitute for a human check. */
  confidence: z.number().min(0).max(1),
});
export type ExtractedField = z.output<typeof extractedFieldSchema>;

export const extractionResultsSchema = component(
  "ExtractionResults",
  z.object({
    job_id: uuid,
    document_id: uuid,
    completed_at: dateTime,
    fields: z.array(extractedFieldSchema),
  }),
);

/** A job as the sandbox keeps it: its schedule, its planned outcome, its results once done. */
export interface StoredExtractionJob extends ExtractionJob {
  /** When it leaves the queue and when it finishes, unless cancelled before. */
  starts_at: string;
  finishes_at: string;
  /** Decided from the document when the job is created: its text, or why it has none. */
  outcome: { fields: ExtractedField[] } | { error: { code: string; message: string } };
  /** The document's dataroom when the job was created: rights outlive the document. */
  dataroom_id: string | null;
}
