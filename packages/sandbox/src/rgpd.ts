import { createHash } from "node:crypto";
import { businessDate } from "./clock.js";
import type { SandboxData } from "./data/index.js";
import type { Json, JsonObject } from "./models/common.js";
import type { RgpdCategory, RgpdExport, RgpdExportStatus } from "./models/rgpd.js";
import { profileOf, type User } from "./models/users.js";
import type { SandboxState } from "./state.js";

/**
 * Personal-data processing of spec part 5 (rgpd_export, rgpd_inventory, rgpd_erasure), as the
 * sandbox models it: what it holds about a user, how an export is prepared, and what an erasure
 * does. The delays are the sandbox's (README).
 */

/** An erasure is carried out this many days after the request: the one month of RGPD art. 12. */
export const ERASURE_DELAY_DAYS = 30;
/** An export is ready this long after the request, and served this long after that. */
export const EXPORT_PREPARATION_SECONDS = 30;
export const EXPORT_RETENTION_DAYS = 7;

const ERASED_NAME = { first_name: "Utilisateur", last_name: "anonymisé" };
const DAY_MS = 86_400_000;

/** An export as stored: its content is taken at the request, served only while it is ready. */
export interface RgpdExportRecord extends Omit<RgpdExport, "status" | "data" | "size_bytes"> {
  content: JsonObject;
}

type PersonalDataSource = Pick<SandboxData, "savedViews" | "dashboards" | "notes" | "entity">;

const ownNotes = (data: Pick<SandboxData, "notes">, userId: string) =>
  data.notes.filter((n) => n.user_id === userId);

interface CategoryRule extends Omit<RgpdCategory, "records"> {
  records(data: SandboxData, userId: string): number;
}

/** What the entity holds about a user, and what an erasure does to each part. */
const CATEGORIES: readonly CategoryRule[] = [
  {
    category: "identity",
    description: "Nom, adresse électronique, fonction, langue et fuseau horaire du compte.",
    legal_basis: "contract",
    retention: "Durée du compte ; supprimé à l'effacement.",
    on_erasure: "pseudonymised",
    records: () => 1,
  },
  {
    category: "preferences",
    description: "Préférences d'affichage et préférences d'alerte.",
    legal_basis: "contract",
    retention: "Durée du compte.",
    on_erasure: "deleted",
    records: () => 2,
  },
  {
    category: "saved_views",
    description: "Vues enregistrées (filtres, colonnes, tris).",
    legal_basis: "contract",
    retention: "Durée du compte.",
    on_erasure: "deleted",
    records: (data, id) => data.savedViews.filter((v) => v.user_id === id).length,
  },
  {
    category: "custom_dashboards",
    description: "Tableaux de bord personnels et leurs partages.",
    legal_basis: "contract",
    retention: "Durée du compte.",
    on_erasure: "deleted",
    records: (data, id) => data.dashboards.filter((d) => d.user_id === id).length,
  },
  {
    category: "follow_up_notes",
    description: "Notes de suivi rédigées sur les opérations (auteur et nom affiché).",
    legal_basis: "legal_obligation",
    retention: "Durée de l'opération, puis 5 ans (obligations de conservation du gestionnaire).",
    on_erasure: "pseudonymised",
    records: (data, id) => ownNotes(data, id).length,
  },
  {
    category: "rgpd_exports",
    description: "Exports de données personnelles demandés.",
    legal_basis: "legal_obligation",
    retention: `${EXPORT_RETENTION_DAYS} jours après leur mise à disposition.`,
    on_erasure: "deleted",
    records: (data, id) => data.rgpdExports.filter((e) => e.user_id === id).length,
  },
];

export function inventoryOf(data: SandboxData, userId: string): RgpdCategory[] {
  return CATEGORIES.map(({ records, ...category }) => ({
    ...category,
    records: records(data, userId),
  }));
}

const categoriesThat = (outcome: RgpdCategory["on_erasure"]) =>
  CATEGORIES.filter((c) => c.on_erasure === outcome).map((c) => c.category);
export const ERASURE_DELETES = categoriesThat("deleted");
export const ERASURE_PSEUDONYMISES = categoriesThat("pseudonymised");

/** A deep copy, so an export keeps what was true when it was asked for. */
const snapshot = (value: unknown): Json => JSON.parse(JSON.stringify(value));

/** Everything an export carries about a user; never a dashboard's share_token (spec part 2). */
export function personalData(data: PersonalDataSource, user: User): JsonObject {
  const dashboards = data.dashboards
    .filter((d) => d.user_id === user.id)
    .map(({ share_token: _secret, ...dashboard }) => dashboard);
  return {
    profile: snapshot(profileOf(user, data.entity.id)),
    account: snapshot({
      status: user.status,
      invited_at: user.invited_at,
      activated_at: user.activated_at,
      last_login_at: user.last_login_at,
    }),
    saved_views: snapshot(data.savedViews.filter((v) => v.user_id === user.id)),
    custom_dashboards: snapshot(dashboards),
    follow_up_notes: snapshot(
      ownNotes(data, user.id).map((n) => ({
        id: n.id,
        operation_id: n.operation_id,
        date: n.date,
        note_type: n.note_type,
        content: n.content,
      })),
    ),
  };
}

/** The export's state follows the sandbox's clock: pending, then ready, then expired. */
export function exportStatus(record: RgpdExportRecord, nowMs: number): RgpdExportStatus {
  if (nowMs < Date.parse(record.ready_at)) return "pending";
  return nowMs < Date.parse(record.expires_at) ? "ready" : "expired";
}

/** What the routes publish of an export at `nowMs`. */
export function publishedExport(record: RgpdExportRecord, nowMs: number): RgpdExport {
  const { content, ...fields } = record;
  const status = exportStatus(record, nowMs);
  const data = status === "ready" ? content : null;
  return {
    ...fields,
    status,
    size_bytes: data === null ? null : Buffer.byteLength(JSON.stringify(data)),
    data,
  };
}

/** A new export job for `user`, with its content as it is now. */
export function newExport(
  data: PersonalDataSource,
  user: User,
  id: string,
  requestedMs: number,
): RgpdExportRecord {
  const readyMs = requestedMs + EXPORT_PREPARATION_SECONDS * 1000;
  return {
    id,
    user_id: user.id,
    format: "json",
    requested_at: new Date(requestedMs).toISOString(),
    ready_at: new Date(readyMs).toISOString(),
    expires_at: new Date(readyMs + EXPORT_RETENTION_DAYS * DAY_MS).toISOString(),
    content: personalData(data, user),
  };
}

/** The business date an erasure requested at `nowMs` is carried out on. */
export function erasureDate(nowMs: number): string {
  return businessDate(nowMs + ERASURE_DELAY_DAYS * DAY_MS);
}

/**
 * Carries out the erasures whose date has come, at the start of that day: read lazily, before
 * any delegated call and on the users routes, so moving the sandbox's clock is enough.
 */
export function completeDueErasures(state: SandboxState, nowMs: number): void {
  const today = businessDate(nowMs);
  for (const request of state.data.rgpdErasures) {
    if (request.status !== "scheduled" || request.effective_on > today) continue;
    const at = `${request.effective_on}T00:00:00.000Z`;
    erase(state.data, request.user_id, at);
    Object.assign(request, { status: "completed", completed_at: at });
  }
}

/**
 * Carries out each category's `on_erasure` (CATEGORIES above): deletes what goes, and removes
 * the person from what stays. The account remains as a suspended tombstone under its id, so
 * that notes and audit trails still point somewhere, with neither name nor address.
 */
function erase(data: SandboxData, userId: string, at: string): void {
  const user = data.users.find((u) => u.id === userId);
  if (!user) return;
  const digest = createHash("sha256").update(user.id).digest("hex").slice(0, 12);
  Object.assign(user, {
    ...ERASED_NAME,
    display_name: `${ERASED_NAME.first_name} ${ERASED_NAME.last_name}`,
    email: `efface-${digest}@anonymise.invalid`,
    job_title: "",
    preferences: {},
    alert_preferences: {},
    status: "suspended",
    suspended_at: at,
    suspension_reason: "Effacement RGPD",
    invitation_expires_at: null,
    password_reset_requested_at: null,
    last_login_at: null,
    erased_at: at,
    updated_at: at,
  });
  const keep = <T extends { user_id: string }>(items: T[]) => {
    const kept = items.filter((item) => item.user_id !== userId);
    items.splice(0, items.length, ...kept);
  };
  keep(data.savedViews);
  keep(data.dashboards);
  keep(data.rgpdExports);
  for (const dashboard of data.dashboards) {
    const members = dashboard.sharing?.members;
    if (Array.isArray(members) && members.includes(userId))
      dashboard.sharing = { ...dashboard.sharing, members: members.filter((m) => m !== userId) };
  }
  for (const note of ownNotes(data, userId)) note.author_name = user.display_name;
}
