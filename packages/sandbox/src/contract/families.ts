/**
 * The 21 resource families of spec part 1, in the spec's order. Each is one OpenAPI tag of the
 * per-key export; its description is the spec's purpose line.
 */
export const FAMILIES = [
  {
    tag: "auth",
    name: "Authentication",
    description: "Exchange a signed HMAC message for a short-lived bearer.",
  },
  {
    tag: "entity",
    name: "Entity and portfolio",
    description: "Integration context, portfolio aggregates, RCCI summary.",
  },
  {
    tag: "deals",
    name: "Deals",
    description: "Pre-closing CRM pipeline, detail and attached notes.",
  },
  {
    tag: "funds",
    name: "Funds and SPVs",
    description: "Investment structures, attachments, external synchronisation of SPVs.",
  },
  {
    tag: "operators",
    name: "Operators",
    description: "Identity and metadata, external synchronisation, third-party risks.",
  },
  {
    tag: "operations",
    name: "Operations",
    description: "List, detail, external synchronisation, imports, notes.",
  },
  {
    tag: "taxonomies",
    name: "Taxonomies and business fields",
    description: "Entity-visible codes and definitions of business properties.",
  },
  {
    tag: "timeline",
    name: "Timeline",
    description: "Paginated events and narrative of an operation.",
  },
  {
    tag: "documents",
    name: "Documents",
    description: "Records, download when available, upload, attachment.",
  },
  {
    tag: "users",
    name: "Users",
    description: "Entity user management, activation, suspension, account actions.",
  },
  {
    tag: "delegated",
    name: "Delegated user",
    description: "Profile, preferences, saved views, dashboards, personal-data processing.",
  },
  {
    tag: "settings",
    name: "Settings",
    description: "Business, reporting and branding settings of the entity.",
  },
  {
    tag: "search",
    name: "Search",
    description: "Cross-resource search or search of indexed document content.",
  },
  {
    tag: "alerts",
    name: "Alerts and notifications",
    description: "Read, acknowledge, resolve, postpone, false positive, depending on the resource.",
  },
  {
    tag: "calendar",
    name: "Calendar",
    description: "Persisted events, modifications, accept or reject decisions.",
  },
  {
    tag: "siren",
    name: "SIREN enrichment",
    description: "Local read, validation, explicit provider resolution.",
  },
  {
    tag: "repayments",
    name: "Repayments",
    description: "Repayment schedules and records of an operation.",
  },
  {
    tag: "reporting",
    name: "Reporting",
    description: "INREV XLSX export, templates, tabular previews.",
  },
  {
    tag: "workflows",
    name: "Workflows",
    description: "Presets, definitions, executions, history, recommendations.",
  },
  {
    tag: "ai_extraction",
    name: "AI extraction",
    description: "Document jobs, follow-up, public results.",
  },
  {
    tag: "tasks",
    name: "Tasks",
    description: "Kanban board, operation tasks, reordering, labels.",
  },
] as const;

export type FamilyTag = (typeof FAMILIES)[number]["tag"];
