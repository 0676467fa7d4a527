import { createHash } from "node:crypto";
import { z } from "zod";
import { CITIES } from "../data/names.js";
import {
  type SirenRecord,
  sirenCheckSchema,
  sirenRecordSchema,
  sirenResolutionSchema,
} from "../models/siren.js";
import { Problem } from "../problem.js";
import { defineRoute, type ExampleContext, json } from "../routing.js";
import { checkSiren } from "../siren.js";

const nineDigits = z.strictObject({
  siren: z.string().regex(/^\d{9}$/, "must be exactly 9 digits"),
});

export const sirenRoutes = [
  defineRoute({
    id: "siren_get",
    family: "siren",
    method: "GET",
    path: "/enrichment/siren/{siren}",
    scope: "operateurs:read",
    kind: "read",
    summary: "Read a company from local data or the cache",
    description: "Never calls the external provider (never billable).",
    response: { status: 200, schema: sirenRecordSchema },
    refusals: { 404: ["siren_not_found_locally"] },
    example: seededSiren,
    params: nineDigits,
    // Local data or cache only: this route never triggers a billable call (spec part 4).
    handle({ params, state }) {
      const record = state.sirenCache.get(params.siren);
      if (!record) {
        throw new Problem(
          404,
          `No local data for SIREN ${params.siren}; an explicit resolution (billable) can fetch it.`,
          {
            reasonCode: "siren_not_found_locally",
          },
        );
      }
      return json(record);
    },
  }),
  defineRoute({
    id: "siren_validate",
    family: "siren",
    method: "GET",
    path: "/enrichment/siren/{siren}/validate",
    scope: "operateurs:read",
    kind: "read",
    summary: "Check a SIREN's format and check digit",
    description: "Answers for any input up to 32 characters, without calling a provider.",
    response: { status: 200, schema: sirenCheckSchema },
    example: seededSiren,
    // Any short string is accepted here: reporting what is wrong with it is this route's job.
    params: z.strictObject({ siren: z.string().max(32) }),
    handle: ({ params }) => json(checkSiren(params.siren)),
  }),
  defineRoute({
    id: "siren_resolve",
    family: "siren",
    method: "POST",
    path: "/enrichment/siren/{siren}/resolve",
    scope: "operateurs:write",
    kind: "write",
    summary: "Resolve a SIREN with the external provider (billable)",
    response: { status: 200, schema: sirenResolutionSchema },
    refusals: { 422: ["siren_invalid"] },
    example: seededSiren,
    params: nineDigits,
    handle({ params, state, now }) {
      const check = checkSiren(params.siren);
      if (!check.valid) {
        throw new Problem(422, `siren: ${check.reason}`, {
          reasonCode: "siren_invalid",
          errors: [{ field: "siren", rule: "Luhn checksum", message: check.reason ?? "invalid" }],
        });
      }
      state.billableResolutions++;
      const record = providerLookup(params.siren, new Date(now()).toISOString());
      state.sirenCache.set(record.siren, { ...record, source: "cache" });
      return json({ ...record, billable: true, provider: "sandbox-registry" });
    },
  }),
];

/** The simulated registry: a stable, plausible company for any valid SIREN. */
function providerLookup(siren: string, fetchedAt: string): SirenRecord {
  const digest = createHash("sha256").update(siren).digest();
  const [city, postcode] = CITIES[digest[0]! % CITIES.length] ?? ["Paris", "75001"];
  const words = ["Horizon", "Patrimoine", "Bâtir", "Urba", "Rives", "Essor", "Cité", "Terra"];
  return {
    siren,
    denomination: `${words[digest[1]! % words.length]?.toUpperCase()} ${words[digest[2]! % words.length]?.toUpperCase()} ${siren.slice(0, 3)}`,
    forme_juridique: ["SAS", "SARL", "SCI", "SA"][digest[3]! % 4] ?? "SAS",
    code_naf: ["41.10A", "41.20A", "68.10Z", "68.20B"][digest[4]! % 4] ?? "41.10A",
    adresse: `${(digest[5]! % 150) + 1} avenue de la République, ${postcode} ${city}`,
    date_creation: `${1985 + (digest[6]! % 38)}-${String((digest[7]! % 12) + 1).padStart(2, "0")}-15`,
    etat_administratif: digest[8]! % 10 === 0 ? "cesse" : "actif",
    source: "provider",
    fetched_at: fetchedAt,
  };
}

/** For the contract test: a SIREN the local data knows. */
function seededSiren({ state }: ExampleContext) {
  const record = state.data.sirenRecords[0];
  return record ? { params: { siren: record.siren } } : {};
}
