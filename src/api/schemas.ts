import { z } from "zod";

/**
 * The client's reading of the spec's limits (parts 2, 4 and 8), written independently of the
 * sandbox. Inputs are checked here before anything is sent. The sandbox's models say many of
 * the same things again (packages/sandbox/src/models/): on purpose, as an independent oracle reads the
 * spec on its own; a shared module would make the tests agree with a mistake in it.
 */

export const uuid = z
  .string()
  .regex(
    /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
    "must be a UUID",
  );

/** A business date (spec part 2): YYYY-MM-DD, no time zone. */
export const businessDate = z.iso.date({ error: "must be a date, YYYY-MM-DD" });

// Bounds are in the schema; only what it cannot say is described (every byte is paid per session).
export const limit = (max: number, fallback: number) =>
  z.int().min(1).max(max).describe(`Default ${fallback}.`);
export const offset = z.int().min(0);

/** Codes come from the taxonomies, never interface labels; `active` is the API's shortcut. */
export const operationStatus = z
  .string()
  .min(1)
  .max(180)
  .describe("An operation_status taxonomy code, or active (sourcing to livraison).");

export const exactName = z.string().min(1).max(255).describe("Exact name.");

export const DEAL_STATUSES = [
  "sourcing",
  "analyse",
  "due_diligence",
  "comite",
  "closing",
  "abandonne",
] as const;

/** Alerts (the export: Alert, GET /alerts). */
export const ALERT_STATUSES = [
  "open",
  "acknowledged",
  "postponed",
  "resolved",
  "false_positive",
] as const;
export const SEVERITIES = ["info", "warning", "critical"] as const;

/** The kinds the export names for timeline events (TimelineEvent.type) and search hits. */
export const TIMELINE_TYPES = [
  "status_change",
  "note",
  "alert",
  "calendar_event",
  "document",
  "task",
  "repayment",
] as const;
export const SEARCH_TYPES = ["operation", "deal", "operateur", "fond", "spv", "document"] as const;

/**
 * A comma-separated list of known kinds, as the API takes `types` (a string of at most 200
 * characters, each part trimmed); an unknown kind is refused by name before anything is sent.
 */
export const commaList = (values: readonly string[]) =>
  z
    .string()
    .max(200)
    .superRefine((value, ctx) => {
      if (value.length > 200) return; // the length is refused already
      // Named back, a few and short: the value comes from the model.
      const unknown = value
        .split(",")
        .map((t) => t.trim())
        .filter((t) => !values.includes(t));
      if (unknown.length > 0)
        ctx.addIssue({
          code: "custom",
          message: `must be a comma-separated list of ${values.join(", ")}; unknown: ${unknown
            .slice(0, 3)
            .map((t) => JSON.stringify(t.slice(0, 40)))
            .join(", ")}${unknown.length > 3 ? "…" : ""}`,
        });
    })
    .describe(`Comma-separated: ${values.join(", ")}.`);

/** An alert move's optional comment (every alert write takes one). */
export const alertComment = z.string().min(1).max(2000);

export const siren = z.string().regex(/^\d{9}$/, "must be exactly 9 digits");

/** Follow-up note body: every property optional and nullable (spec part 2). */
export const noteBody = z.strictObject({
  content: z.string().min(1).max(10_000).nullish(),
  text: z.string().min(1).max(10_000).nullish(),
  note_type: z.enum(["reporting", "call", "comite", "risque", "libre"]).nullish(),
  date: z.iso
    .datetime({ offset: true, error: "must be an ISO 8601 date-time with a time zone" })
    .nullish(),
  category: z.string().min(1).max(80).nullish(),
});

/** Free-form JSON (arrives parsed); its size and depth are capped where it is used. */
const openObject = z.record(z.string(), z.unknown());

/**
 * The spec gives free-form objects no size (spec part 2: layout, filters, scope); this client
 * caps what it sends so that one argument cannot swell a journal or a preview.
 */
export const FREE_FORM_MAX_BYTES = 16_384;
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const capped = <T extends z.ZodType>(schema: T) =>
  schema.refine(
    (value) => jsonBytes(value) <= FREE_FORM_MAX_BYTES,
    `must take at most ${FREE_FORM_MAX_BYTES} bytes of JSON`,
  );

export const dashboardBody = z.strictObject({
  name: z.string().min(1).max(200),
  description: z.string().max(2000).nullish(),
  layout: capped(z.array(openObject).max(50)).optional(),
  filters: capped(openObject).optional(),
  default_scope: capped(openObject).optional(),
});

/**
 * Saved views (spec part 2). The spec names the operations filter keys, the limits and that
 * types, columns, sort fields, icons and colours are checked against the schema's allowlists
 * without giving their values: these are the sandbox's documented choices (README, "Shapes the
 * spec leaves open"), checked here so a human never approves a view the API must refuse.
 */
export const VIEW_TYPES = ["operations", "deals", "operateurs"] as const;
export type ViewType = (typeof VIEW_TYPES)[number];
export const VIEW_ICONS = [
  "star",
  "folder",
  "chart",
  "building",
  "briefcase",
  "flag",
  "calendar",
  "bell",
] as const;
export const VIEW_COLORS = [
  "slate",
  "blue",
  "green",
  "amber",
  "red",
  "purple",
  "teal",
  "pink",
] as const;

/** Filter keys per view type; for operations views, `status` is not one (spec part 2). */
export const VIEW_FILTER_KEYS: Record<ViewType, readonly string[]> = {
  operations: [
    "preset",
    "search",
    "statut",
    "statut_interne",
    "statut_operationnel",
    "cycle_interne",
    "classe_actif",
    "type_investissement",
    "operateur_id",
  ],
  deals: ["preset", "search", "status", "classe_actif", "operateur_id", "responsable"],
  operateurs: ["preset", "search", "type", "litiges_en_cours", "responsable_interne"],
};

/** Columns per view type; sort fields come from the same list. */
export const VIEW_COLUMNS: Record<ViewType, readonly string[]> = {
  operations: [
    "name",
    "statut",
    "phase",
    "statut_interne",
    "statut_operationnel",
    "classe_actif",
    "sous_classe_actif",
    "type_investissement",
    "type_operation",
    "spv",
    "operateur",
    "montant_engage",
    "montant_appele",
    "encours",
    "taux_annuel",
    "date_echeance",
    "ville",
    "taux_commercialisation",
    "updated_at",
  ],
  deals: [
    "name",
    "status",
    "montant_estime",
    "classe_actif",
    "operateur",
    "responsable",
    "date_sourcing",
    "date_closing_prevue",
    "updated_at",
  ],
  operateurs: [
    "name",
    "siren",
    "type",
    "reputation_gouvernance_score",
    "litiges_en_cours",
    "responsable_interne",
    "updated_at",
  ],
};

const SAVED_VIEW_STATE_MAX_BYTES = 16_384;
const VIEW_NAME_MAX = 120;

const savedViewFields = {
  name: z
    .string()
    .max(500)
    .refine((name) => normaliseViewName(name) !== "", "must not be blank")
    .refine(
      (name) => normaliseViewName(name).length <= VIEW_NAME_MAX,
      `must have at most ${VIEW_NAME_MAX} characters once spaces are collapsed`,
    )
    .describe(`At most ${VIEW_NAME_MAX} characters.`),
  type: z.enum(VIEW_TYPES),
  // The keys and columns of each type are named by the refusal of a wrong one: listing them
  // all here would cost every session a kilobyte of context for a rarely used tool.
  filters: openObject.describe(
    "At most 24 keys, those of the view's type. Operations views take statut, not status.",
  ),
  columns: z.array(z.string().min(1).max(64)).max(64).describe("Columns of the view's type."),
  sort: z
    .array(
      z.strictObject({
        sort_by: z.string().min(1).max(64).describe("One of the type's columns."),
        sort_order: z.enum(["asc", "desc"]),
      }),
    )
    .max(4),
  icon: z.enum(VIEW_ICONS).nullable(),
  color: z.enum(VIEW_COLORS).nullable(),
  is_default: z.boolean(),
};

export function normaliseViewName(name: string): string {
  return name.trim().replace(/\s+/g, " ");
}

type ViewState = {
  type?: ViewType;
  filters?: Record<string, unknown>;
  columns?: readonly string[];
  sort?: ReadonlyArray<{ sort_by: string }>;
};

/**
 * The cross-field rules of a view's state (spec part 2): its size, then the filter keys,
 * columns and sort fields its type accepts. Exported for updates, whose type is the stored
 * view's.
 */
export function viewStateIssues(view: ViewState): Array<{ path: PropertyKey[]; message: string }> {
  const issues: Array<{ path: PropertyKey[]; message: string }> = [];
  const bytes = Buffer.byteLength(
    JSON.stringify({ filters: view.filters, columns: view.columns, sort: view.sort }),
  );
  if (bytes > SAVED_VIEW_STATE_MAX_BYTES) {
    issues.push({
      path: ["filters"],
      message: `must, with columns and sort, take at most ${SAVED_VIEW_STATE_MAX_BYTES} bytes of JSON (they take ${bytes})`,
    });
  }
  if (view.filters && Object.keys(view.filters).length > 24)
    issues.push({ path: ["filters"], message: "must have at most 24 keys" });
  const type = view.type;
  if (!type) return issues;
  for (const key of Object.keys(view.filters ?? {})) {
    if (!VIEW_FILTER_KEYS[type].includes(key)) {
      issues.push({
        path: ["filters", key],
        message:
          type === "operations" && key === "status"
            ? "is not accepted for operations views; use statut"
            : `is not a filter of ${type} views (${VIEW_FILTER_KEYS[type].join(", ")})`,
      });
    }
  }
  (view.columns ?? []).forEach((column, i) => {
    if (!VIEW_COLUMNS[type].includes(column))
      issues.push({
        path: ["columns", i],
        message: `must be a column of ${type} views (${VIEW_COLUMNS[type].join(", ")}), not ${column}`,
      });
  });
  (view.sort ?? []).forEach((key, i) => {
    if (!VIEW_COLUMNS[type].includes(key.sort_by))
      issues.push({
        path: ["sort", i, "sort_by"],
        message: `must be a column of ${type} views (${VIEW_COLUMNS[type].join(", ")}), not ${key.sort_by}`,
      });
  });
  return issues;
}

function checkViewState(view: ViewState, ctx: z.RefinementCtx): void {
  for (const issue of viewStateIssues(view)) ctx.addIssue({ code: "custom", ...issue });
}

/** A view as created: name and type required, the rest optional. */
const savedViewBody = z.strictObject({
  name: savedViewFields.name,
  type: savedViewFields.type,
  filters: savedViewFields.filters.optional(),
  columns: savedViewFields.columns.optional(),
  sort: savedViewFields.sort.optional(),
  icon: savedViewFields.icon.optional(),
  color: savedViewFields.color.optional(),
  is_default: savedViewFields.is_default.optional(),
});

export const savedViewCreateBody = savedViewBody.superRefine(checkViewState);

/**
 * An update: absent fields stay as they are, null clears a nullable one. Updates stay bound to
 * the stored view's type (spec part 2): the tool checks the state against it before drafting.
 */
export const savedViewUpdateBody = savedViewBody
  .partial()
  .refine((body) => Object.keys(body).length > 0, "must change at least one field")
  .superRefine(checkViewState);

export const recommendationId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1 to 128 of A-Z a-z 0-9 _ -");
