import { randomUUID } from "node:crypto";
import { z } from "zod";
import { DEMO_USERS } from "../data/users.js";
import { delegatedUser } from "../delegation.js";
import { serviceAccount } from "../keys.js";
import {
  type RgpdErasure,
  rgpdErasureSchema,
  rgpdExportSchema,
  rgpdInventorySchema,
} from "../models/rgpd.js";
import { notFound, Problem } from "../problem.js";
import {
  ERASURE_DELAY_DAYS,
  ERASURE_DELETES,
  ERASURE_PSEUDONYMISES,
  EXPORT_PREPARATION_SECONDS,
  EXPORT_RETENTION_DAYS,
  erasureDate,
  exportStatus,
  inventoryOf,
  newExport,
  publishedExport,
} from "../rgpd.js";
import { defineRoute, json } from "../routing.js";
import { uuid } from "../validation.js";

/** The delegated user's personal-data routes (spec part 5: rgpd_export, _inventory, _erasure). */
export const rgpdRoutes = [
  defineRoute({
    id: "rgpd_export_create",
    family: "delegated",
    method: "POST",
    path: "/users/me/rgpd/export",
    // Reading one's own data: the contract makes it a read (users:read), so no Idempotency-Key.
    scope: "users:read",
    kind: "read",
    capability: "rgpd_export",
    summary: "Ask for an export of the delegated user's personal data",
    description: `Answers the export job: \`pending\` for ${EXPORT_PREPARATION_SECONDS} s, then \`ready\` with the data for ${EXPORT_RETENTION_DAYS} days, then \`expired\`. While one is pending, asking again answers that one.`,
    response: { status: 202, schema: rgpdExportSchema },
    handle({ user, state, now }) {
      const nowMs = now();
      const me = delegatedUser(user);
      const pending = state.data.rgpdExports.find(
        (e) => e.user_id === me.id && exportStatus(e, nowMs) === "pending",
      );
      if (pending) return json(publishedExport(pending, nowMs), 202);
      const record = newExport(state.data, me, randomUUID(), nowMs);
      state.data.rgpdExports.push(record);
      return json(publishedExport(record, nowMs), 202);
    },
  }),
  defineRoute({
    id: "rgpd_export_get",
    family: "delegated",
    method: "GET",
    path: "/users/me/rgpd/export/{export_id}",
    scope: "users:read",
    kind: "read",
    capability: "rgpd_export",
    summary: "Follow a personal-data export, and read it once ready",
    description: "`data` is served while the export is `ready`, null before and after.",
    params: z.strictObject({ export_id: uuid }),
    response: { status: 200, schema: rgpdExportSchema },
    refusals: { 404: ["rgpd_export_not_found"] },
    example: ({ state }) => {
      // The contract test acts for the first user of each key's allowlist: Camille.
      const own = state.data.rgpdExports.filter((e) => e.user_id === DEMO_USERS.camille);
      const latest = own.at(-1);
      return latest ? { params: { export_id: latest.id } } : {};
    },
    handle({ params, user, state, now }) {
      // Someone else's export is reported as missing, as for views and dashboards.
      const record = state.data.rgpdExports.find(
        (e) => e.id === params.export_id.toLowerCase() && e.user_id === user?.id,
      );
      if (!record)
        throw notFound("personal-data export", params.export_id, "rgpd_export_not_found");
      return json(publishedExport(record, now()));
    },
  }),
  defineRoute({
    id: "rgpd_inventory_get",
    family: "delegated",
    method: "GET",
    path: "/users/me/rgpd/inventory",
    scope: "users:read",
    kind: "read",
    capability: "rgpd_inventory",
    summary: "List the personal data held about the delegated user",
    description:
      "By category: how many records, on what legal basis, for how long, and what an erasure does to them; with the erasure request, if any.",
    response: { status: 200, schema: rgpdInventorySchema },
    handle({ user, state, now }) {
      const userId = user?.id ?? "";
      return json({
        user_id: userId,
        generated_at: new Date(now()).toISOString(),
        categories: inventoryOf(state.data, userId),
        erasure: state.data.rgpdErasures.find((r) => r.user_id === userId) ?? null,
      });
    },
  }),
  defineRoute({
    id: "rgpd_erasure_request",
    family: "delegated",
    method: "POST",
    path: "/users/me/rgpd/erasure",
    scope: "users:write",
    kind: "write",
    capability: "rgpd_erasure",
    summary: "Ask for the erasure of the delegated user's personal data (irreversible)",
    description: `Recorded at once and never withdrawn; carried out ${ERASURE_DELAY_DAYS} days later. Then the account becomes a suspended tombstone without name or address, its views, dashboards and exports are deleted, its notes keep their text under an anonymous author, and the sandbox no longer acts for it.`,
    body: z.strictObject({ reason: z.string().trim().min(1).max(1000).optional() }).optional(),
    response: { status: 202, schema: rgpdErasureSchema },
    refusals: { 409: ["erasure_already_requested"] },
    handle({ body, user, state, key, now }) {
      const userId = user?.id ?? "";
      const earlier = state.data.rgpdErasures.find((r) => r.user_id === userId);
      if (earlier) {
        throw new Problem(
          409,
          `User ${userId} asked for erasure on ${earlier.requested_at}; it is carried out on ${earlier.effective_on}.`,
          { reasonCode: "erasure_already_requested" },
        );
      }
      const nowMs = now();
      const request: RgpdErasure = {
        id: randomUUID(),
        user_id: userId,
        status: "scheduled",
        reason: body?.reason ?? null,
        requested_at: new Date(nowMs).toISOString(),
        requested_by: serviceAccount(key),
        effective_on: erasureDate(nowMs),
        completed_at: null,
        deleted: [...ERASURE_DELETES],
        pseudonymised: [...ERASURE_PSEUDONYMISES],
      };
      state.data.rgpdErasures.push(request);
      return json(request, 202);
    },
  }),
];
