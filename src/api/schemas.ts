import { z } from "zod";

/**
 * The client's reading of the spec's limits (parts 2, 4 and 8), written independently of the
 * sandbox. Inputs are checked here before anything is sent.
 */

export const uuid = z
  .string()
  .regex(
    /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
    "must be a UUID",
  );

export const limit = (max: number, fallback: number) =>
  z.int().min(1).max(max).describe(`Page size, 1-${max} (the API's default: ${fallback}).`);
export const offset = z.int().min(0).describe("Results to skip (default 0).");

/** Codes come from the taxonomies, never interface labels; `active` is the API's shortcut. */
export const operationStatus = z
  .string()
  .min(1)
  .max(180)
  .describe("An operation_status taxonomy code, or active (sourcing to livraison).");

export const exactName = z
  .string()
  .min(1)
  .max(255)
  .describe("Exact name; case and surrounding spaces ignored.");

export const DEAL_STATUSES = [
  "sourcing",
  "analyse",
  "due_diligence",
  "comite",
  "closing",
  "abandonne",
] as const;

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

const openObject = z.record(z.string(), z.json());

export const dashboardBody = z.strictObject({
  name: z.string().min(1).max(200),
  description: z.string().max(2000).nullish(),
  layout: z.array(openObject).max(50).optional(),
  filters: openObject.optional(),
  default_scope: openObject.optional(),
});

/** Filter keys an `operations` view accepts; `status` is not one of them (spec part 2). */
export const OPERATIONS_VIEW_FILTER_KEYS = [
  "preset",
  "search",
  "statut",
  "statut_interne",
  "statut_operationnel",
  "cycle_interne",
  "classe_actif",
  "type_investissement",
  "operateur_id",
] as const;

const SAVED_VIEW_STATE_MAX_BYTES = 16_384;

const savedViewFields = {
  name: z
    .string()
    .max(500)
    .refine((name) => name.trim() !== "", "must not be blank"),
  type: z.string().min(1).max(64),
  filters: openObject.refine((f) => Object.keys(f).length <= 24, "must have at most 24 keys"),
  columns: z.array(z.string().min(1).max(128)).max(64),
  sort: z
    .array(
      z.strictObject({ sort_by: z.string().min(1).max(128), sort_order: z.enum(["asc", "desc"]) }),
    )
    .max(4),
  icon: z.string().max(64).nullable(),
  color: z.string().max(64).nullable(),
  is_default: z.boolean(),
};

type ViewState = {
  type?: string;
  filters?: Record<string, unknown>;
  columns?: unknown;
  sort?: unknown;
};

/** The cross-field rules of a view's state: its size, and the operations filter allowlist. */
function checkViewState(view: ViewState, ctx: z.RefinementCtx): void {
  const bytes = Buffer.byteLength(
    JSON.stringify({ filters: view.filters, columns: view.columns, sort: view.sort }),
  );
  if (bytes > SAVED_VIEW_STATE_MAX_BYTES) {
    ctx.addIssue({
      code: "custom",
      path: ["filters"],
      message: `filters, columns and sort must take at most ${SAVED_VIEW_STATE_MAX_BYTES} bytes of JSON (they take ${bytes})`,
    });
  }
  if (view.type !== "operations" || !view.filters) return;
  for (const key of Object.keys(view.filters)) {
    if (!(OPERATIONS_VIEW_FILTER_KEYS as readonly string[]).includes(key)) {
      ctx.addIssue({
        code: "custom",
        path: ["filters", key],
        message:
          key === "status"
            ? "is not accepted for operations views; use statut"
            : `is not a filter of operations views (${OPERATIONS_VIEW_FILTER_KEYS.join(", ")})`,
      });
    }
  }
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
 * the stored view's type, which the API checks; the size rule is checked here.
 */
export const savedViewUpdateBody = savedViewBody
  .partial()
  .refine((body) => Object.keys(body).length > 0, "send at least one field to change")
  .superRefine(checkViewState);

export const recommendationId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, "must be 1 to 128 of A-Z a-z 0-9 _ -");
