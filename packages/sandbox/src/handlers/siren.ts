import { z } from "zod";
import {
  type SirenRecord,
  sirenCheckSchema,
  sirenRecordSchema,
  sirenResolutionSchema,
} from "../models/siren.js";
import { Problem } from "../problem.js";
import { defineRoute, type ExampleContext, json } from "../routing.js";
import { assertSirens, checkSiren, registryLookup } from "../siren.js";

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
      assertSirens({ siren: params.siren });
      state.billableResolutions++;
      // The registry knows the companies the local data copied from it: the same identity
      // (name, legal form, address, creation), fetched now; any other SIREN, a stable stranger.
      const fetchedAt = new Date(now()).toISOString();
      const known = state.data.sirenRecords.find((r) => r.siren === params.siren);
      const record: SirenRecord = known
        ? { ...known, source: "provider", fetched_at: fetchedAt }
        : registryLookup(params.siren, fetchedAt);
      state.sirenCache.set(record.siren, { ...record, source: "cache" });
      return json({ ...record, billable: true, provider: "sandbox-registry" });
    },
  }),
  defineRoute({
    id: "siren_cache_delete",
    family: "siren",
    method: "DELETE",
    path: "/enrichment/siren/{siren}/cache",
    scope: "operateurs:write",
    kind: "write",
    summary: "Forget a cached resolution",
    description:
      "Removes what an explicit resolution put in the cache; local data stays. Resolves nothing again (never billable): the next read finds the local data, or nothing.",
    response: { status: 204 },
    refusals: { 404: ["siren_not_cached"] },
    example: ({ state }) => {
      const cached = [...state.sirenCache.values()].find((r) => r.source === "cache");
      return cached ? { params: { siren: cached.siren } } : {};
    },
    params: nineDigits,
    // Spec part 4: deleting the cache does not trigger a new resolution.
    handle({ params, state }) {
      const entry = state.sirenCache.get(params.siren);
      if (entry?.source !== "cache") {
        throw new Problem(404, `Nothing is cached for SIREN ${params.siren}.`, {
          reasonCode: "siren_not_cached",
        });
      }
      const local = state.data.sirenRecords.find(
        (r) => r.siren === params.siren && r.source === "local",
      );
      if (local) state.sirenCache.set(params.siren, local);
      else state.sirenCache.delete(params.siren);
      return { status: 204 };
    },
  }),
];

/** For the contract test: a SIREN the local data knows. */
function seededSiren({ state }: ExampleContext) {
  const record = state.data.sirenRecords[0];
  return record ? { params: { siren: record.siren } } : {};
}
