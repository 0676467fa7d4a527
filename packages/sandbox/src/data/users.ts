import type { User } from "../models/users.js";
import type { At } from "./demo.js";

/**
 * The entity's users: five that stand for the cases the delegation rules distinguish (spec
 * part 5), then the rest of the team. Deterministic without a generator: their dates follow
 * `at`, relative to the data's business date.
 */

const USER_DOMAIN = "aurore-capital.example";

/** The demo users: one per case the delegation rules distinguish (see README). */
export const DEMO_USERS = {
  camille: "usr_camille_martin",
  julien: "usr_julien_bernard",
  sophie: "usr_sophie_leroy",
  thomas: "usr_thomas_petit",
  lea: "usr_lea_moreau",
} as const;

/** `Léa` -> `lea`: addresses stay ASCII, as most mail systems expect. */
export function ascii(name: string): string {
  return name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase();
}

/** The address a demo user gets in the entity's domain. */
export function demoEmail(first: string, last: string): string {
  return `${ascii(first)}.${ascii(last).replace(/[^a-z0-9]+/g, "-")}@${USER_DOMAIN}`;
}

/** Invitations are valid for two weeks (the sandbox's choice; README). */
export const INVITATION_VALID_DAYS = 14;

export interface DemoUserSpec {
  id: string;
  first: string;
  last: string;
  jobTitle: string;
  status: User["status"];
  readOnly: boolean;
  /** Days ago the invitation was sent; activation followed two days later. */
  invitedDaysAgo: number;
  suspendedDaysAgo?: number;
  suspensionReason?: string;
  /** Days ago the user last signed in; none for users who never did. */
  lastLoginDaysAgo?: number;
  invitedBy: string | null;
}

/** A demo user whose lifecycle dates agree with its status. */
export function demoUser(spec: DemoUserSpec, at: At): User {
  const invited = spec.status === "invited";
  const suspended = spec.status === "suspended";
  return {
    id: spec.id,
    email: demoEmail(spec.first, spec.last),
    first_name: spec.first,
    last_name: spec.last,
    display_name: `${spec.first} ${spec.last}`,
    job_title: spec.jobTitle,
    status: spec.status,
    read_only: spec.readOnly,
    locale: "fr-FR",
    timezone: "Europe/Paris",
    preferences: { default_landing: "portfolio", number_format: "fr", density: "comfortable" },
    alert_preferences: { email_digest: "daily", critical_push: true, muted_operation_ids: [] },
    created_at: at(-spec.invitedDaysAgo),
    updated_at: at(-Math.min(12, spec.invitedDaysAgo)),
    invited_at: at(-spec.invitedDaysAgo),
    invited_by: spec.invitedBy,
    invitation_expires_at: invited ? at(INVITATION_VALID_DAYS - spec.invitedDaysAgo) : null,
    activated_at: invited ? null : at(2 - spec.invitedDaysAgo),
    suspended_at: suspended ? at(-(spec.suspendedDaysAgo ?? 30)) : null,
    suspension_reason: suspended ? (spec.suspensionReason ?? null) : null,
    password_reset_requested_at: null,
    last_login_at: spec.lastLoginDaysAgo === undefined ? null : at(-spec.lastLoginDaysAgo, 47),
    erased_at: null,
  };
}

/** The five users of the delegation cases (README, demo users). */
export function buildUsers(at: At): User[] {
  const by = DEMO_USERS.camille;
  return [
    demoUser(
      {
        id: DEMO_USERS.camille,
        first: "Camille",
        last: "Martin",
        jobTitle: "Directrice des investissements",
        status: "approved",
        readOnly: false,
        invitedDaysAgo: 700,
        lastLoginDaysAgo: 0,
        // The entity's first administrator, seeded with the rest of the team (data/users.ts).
        invitedBy: "usr_nicolas_lefevre",
      },
      at,
    ),
    demoUser(
      {
        id: DEMO_USERS.julien,
        first: "Julien",
        last: "Bernard",
        jobTitle: "Analyste crédit",
        status: "approved",
        readOnly: true,
        invitedDaysAgo: 700,
        lastLoginDaysAgo: 1,
        invitedBy: by,
      },
      at,
    ),
    demoUser(
      {
        id: DEMO_USERS.sophie,
        first: "Sophie",
        last: "Leroy",
        jobTitle: "Gérante de portefeuille",
        status: "suspended",
        readOnly: false,
        invitedDaysAgo: 700,
        suspendedDaysAgo: 21,
        suspensionReason: "Congé de longue durée",
        lastLoginDaysAgo: 23,
        invitedBy: by,
      },
      at,
    ),
    demoUser(
      {
        id: DEMO_USERS.thomas,
        first: "Thomas",
        last: "Petit",
        jobTitle: "Contrôleur des risques",
        status: "approved",
        readOnly: false,
        invitedDaysAgo: 700,
        lastLoginDaysAgo: 2,
        invitedBy: by,
      },
      at,
    ),
    demoUser(
      {
        id: DEMO_USERS.lea,
        first: "Léa",
        last: "Moreau",
        jobTitle: "Chargée d'affaires",
        status: "invited",
        readOnly: false,
        invitedDaysAgo: 4,
        invitedBy: by,
      },
      at,
    ),
  ];
}

type Colleague = Omit<DemoUserSpec, "invitedBy">;

/**
 * The rest of the entity's team, beside the five users the delegation rules need: enough
 * people for the users routes to show every lifecycle state, an invitation that ran out, and
 * an administrator who was there first. They join after the draws that pick among users
 * (deal owners, note authors), so adding them moved no other data.
 */
const COLLEAGUES: readonly Colleague[] = [
  {
    id: "usr_nicolas_lefevre",
    first: "Nicolas",
    last: "Lefèvre",
    jobTitle: "Directeur général",
    status: "approved",
    readOnly: false,
    invitedDaysAgo: 900,
    lastLoginDaysAgo: 3,
  },
  {
    id: "usr_claire_garnier",
    first: "Claire",
    last: "Garnier",
    jobTitle: "Responsable middle-office",
    status: "approved",
    readOnly: false,
    invitedDaysAgo: 420,
    lastLoginDaysAgo: 0,
  },
  {
    id: "usr_mathieu_blanc",
    first: "Mathieu",
    last: "Blanc",
    jobTitle: "Contrôleur de gestion",
    status: "approved",
    readOnly: false,
    invitedDaysAgo: 300,
    lastLoginDaysAgo: 5,
  },
  {
    id: "usr_antoine_roux",
    first: "Antoine",
    last: "Roux",
    jobTitle: "Analyste junior",
    status: "approved",
    readOnly: true,
    invitedDaysAgo: 150,
    lastLoginDaysAgo: 1,
  },
  {
    id: "usr_ines_mercier",
    first: "Inès",
    last: "Mercier",
    jobTitle: "Gérante de portefeuille",
    status: "suspended",
    readOnly: false,
    invitedDaysAgo: 650,
    suspendedDaysAgo: 60,
    suspensionReason: "Départ de l'entité",
    lastLoginDaysAgo: 61,
  },
  {
    id: "usr_manon_fournier",
    first: "Manon",
    last: "Fournier",
    jobTitle: "Juriste financement",
    status: "invited",
    readOnly: false,
    invitedDaysAgo: 2,
  },
  {
    // Invited three weeks ago: the invitation ran out, and can be sent again.
    id: "usr_hugo_girard",
    first: "Hugo",
    last: "Girard",
    jobTitle: "Stagiaire analyste",
    status: "invited",
    readOnly: true,
    invitedDaysAgo: 21,
  },
];

/** The colleagues, after the five users of the delegation cases. */
export function buildColleagues(at: At): User[] {
  return COLLEAGUES.map((colleague) =>
    demoUser(
      {
        ...colleague,
        // The first administrator invited everyone after him.
        invitedBy: colleague.id === "usr_nicolas_lefevre" ? null : DEMO_USERS.camille,
      },
      at,
    ),
  );
}
