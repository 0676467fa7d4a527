import { z } from "zod";
import { component, date, dateTime } from "./common.js";

/** A company as the local data, the cache or the simulated registry knows it (README). */
export const sirenRecordSchema = component(
  "SirenRecord",
  z.object({
    siren: z.string().regex(/^\d{9}$/),
    denomination: z.string(),
    forme_juridique: z.string(),
    code_naf: z.string(),
    adresse: z.string(),
    date_creation: date,
    etat_administratif: z.enum(["actif", "cesse"]),
    source: z.enum(["local", "cache", "provider"]),
    fetched_at: dateTime,
  }),
);
export type SirenRecord = z.output<typeof sirenRecordSchema>;

/** What an explicit resolution returns: the record, flagged as a billable provider call. */
export const sirenResolutionSchema = component(
  "SirenResolution",
  sirenRecordSchema.extend({ billable: z.boolean(), provider: z.string() }),
);

export const sirenCheckSchema = component(
  "SirenCheck",
  z.object({
    siren: z.string(),
    format_valid: z.boolean(),
    checksum_valid: z.boolean(),
    valid: z.boolean(),
    reason: z.string().nullable(),
  }),
);
