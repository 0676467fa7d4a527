import { z } from "zod";
import { ascii, DEMO_USERS, INVITATION_VALID_DAYS } from "../data/users.js";
import { serviceAccount } from "../keys.js";
import { component, pageOf } from "../models/common.js";
import {
  accountMessageSchema,
  entityUserOf,
  entityUserSchema,
  LOCALES,
  USER_STATUSES,
  type User,
  type UserStatus,
} from "../models/users.js";
import { notFound, Problem } from "../problem.js";
import { completeDueErasures } from "../rgpd.js";
import { defineRoute, json, type RouteContext } from "../routing.js";
import type { SandboxState } from "../state.js";
import { assertTransition, type Transitions } from "../transitions.js";
import { page, pageQuery } from "./pagination.js";
import { sentFields } from "./patch.js";

type AccountMove = "activate" | "suspend" | "reset_password" | "resend_invitation";

/**
 * The account lifecycle (the sandbox's choice; spec part 3 names no moves for users):
 * activation approves an invited or suspended account; only an approved one is suspended or
 * gets a password reset; an invitation is sent again only while the account is invited.
 */
export const USER_MOVES: Transitions<UserStatus, AccountMove> = {
  activate: ["invited", "suspended"],
  suspend: ["approved"],
  reset_password: ["approved"],
  resend_invitation: ["invited"],
};

const DAY_MS = 86_400_000;
const PASSWORD_RESET_VALID_MS = DAY_MS;

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** The fields of a user its administration and the user alike may change. */
export const personFields = {
  first_name: z.string().trim().min(1).max(100),
  last_name: z.string().trim().min(1).max(100),
  job_title: z.string().trim().max(200),
  locale: z.enum(LOCALES),
  timezone: z.string().max(64).refine(isTimeZone, "must be an IANA time zone such as Europe/Paris"),
};

const userParams = z.strictObject({
  user_id: z.string().regex(/^[A-Za-z0-9_.@-]{1,128}$/, "must be 1 to 128 of A-Z a-z 0-9 _ . @ -"),
});

const inviteBody = z.strictObject({
  email: z.email("must be an email address").max(254),
  first_name: personFields.first_name,
  last_name: personFields.last_name,
  job_title: personFields.job_title.optional(),
  read_only: z.boolean().optional(),
  locale: personFields.locale.optional(),
  timezone: personFields.timezone.optional(),
});

const updateBody = z.strictObject({
  first_name: personFields.first_name.optional(),
  last_name: personFields.last_name.optional(),
  job_title: personFields.job_title.optional(),
  read_only: z.boolean().optional(),
  locale: personFields.locale.optional(),
  timezone: personFields.timezone.optional(),
});

export type PersonChanges = Partial<{
  first_name: string;
  last_name: string;
  job_title: string;
  read_only: boolean;
  locale: string;
  timezone: string;
}>;

/** Applies the fields sent (absent ones stay as they are); the display name follows the name. */
export function applyPersonChanges(user: User, changes: PersonChanges, at: string): void {
  Object.assign(user, sentFields(changes), { updated_at: at });
  user.display_name = `${user.first_name} ${user.last_name}`;
}

/** A user of the entity by id (ids compare exactly: they are not UUIDs). */
export function findUser(state: SandboxState, id: string): User {
  const user = state.data.users.find((u) => u.id === id);
  if (!user) throw notFound("user", id, "user_not_found");
  return user;
}

/** An erased account is a pseudonymous tombstone: nothing brings it back (spec part 1, RGPD). */
function refuseErased(user: User): void {
  if (user.erased_at !== null) {
    throw new Problem(
      409,
      `User ${user.id} was erased on ${user.erased_at}; the erasure is final.`,
      {
        reasonCode: "user_erased",
      },
    );
  }
}

/** One move of the lifecycle, after the erasures that fell due. */
function moveUser(ctx: RouteContext<{ user_id: string }, unknown, unknown>, move: AccountMove) {
  const nowMs = ctx.now();
  completeDueErasures(ctx.state, nowMs);
  const user = findUser(ctx.state, ctx.params.user_id);
  refuseErased(user);
  assertTransition(USER_MOVES, move, user.status, `User ${user.id}`);
  return { user, at: new Date(nowMs).toISOString(), nowMs };
}

/** `Léa Moreau` -> `usr_lea_moreau`, numbered when taken. */
function newUserId(state: SandboxState, first: string, last: string): string {
  const slug = (name: string) =>
    ascii(name)
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "");
  const base = `usr_${slug(first)}_${slug(last)}`;
  let id = base;
  for (let n = 2; state.data.users.some((u) => u.id === id); n++) id = `${base}_${n}`;
  return id;
}

/** For the contract test: a user a move may start from; never suspends the default delegated user. */
function userReadyFor(move: AccountMove) {
  return ({ state }: { state: SandboxState }) => {
    const candidates = state.data.users.filter(
      (u) => u.erased_at === null && USER_MOVES[move].includes(u.status),
    );
    const user =
      move === "suspend"
        ? candidates.find((u) => u.id !== DEMO_USERS.camille)
        : // A suspended account first: activating it leaves the invitations to resend.
          (candidates.find((u) => u.status === "suspended") ?? candidates[0]);
    return user ? { params: { user_id: user.id } } : {};
  };
}

const moveRefusals = { 404: ["user_not_found"], 409: ["invalid_transition", "user_erased"] };

export const userRoutes = [
  defineRoute({
    id: "users_list",
    family: "users",
    method: "GET",
    path: "/users",
    scope: "users:read",
    kind: "read",
    summary: "List the entity's users",
    description: "By last name. `search` matches part of a name or an email address.",
    query: z.strictObject({
      status: z.enum(USER_STATUSES).optional(),
      search: z.string().trim().min(1).max(100).optional(),
      ...pageQuery(200, 50),
    }),
    response: { status: 200, schema: component("EntityUserList", pageOf(entityUserSchema)) },
    handle({ query, state, now }) {
      completeDueErasures(state, now());
      const needle = query.search ? ascii(query.search) : null;
      const users = state.data.users
        .filter(
          (u) =>
            (query.status === undefined || u.status === query.status) &&
            (needle === null || ascii(`${u.display_name} ${u.email}`).includes(needle)),
        )
        .sort(
          (a, b) =>
            a.last_name.localeCompare(b.last_name, "fr") ||
            a.first_name.localeCompare(b.first_name, "fr") ||
            a.id.localeCompare(b.id),
        );
      return json(page(users.map(entityUserOf), query));
    },
  }),
  defineRoute({
    id: "user_invite",
    family: "users",
    method: "POST",
    path: "/users",
    scope: "users:write",
    kind: "write",
    summary: "Invite a user",
    description: `The account is \`invited\` until someone activates it; the invitation is valid ${INVITATION_VALID_DAYS} days.`,
    body: inviteBody,
    response: { status: 201, schema: entityUserSchema },
    refusals: { 409: ["user_email_taken"] },
    example: () => ({
      body: {
        email: "margaux.perrin@aurore-capital.example",
        first_name: "Margaux",
        last_name: "Perrin",
        job_title: "Analyste investissements",
      },
    }),
    handle({ body, state, key, now }) {
      const email = body.email.trim().toLowerCase();
      if (state.data.users.some((u) => u.email.toLowerCase() === email)) {
        throw new Problem(409, `A user of this entity already has the address ${email}.`, {
          reasonCode: "user_email_taken",
        });
      }
      const nowMs = now();
      const at = new Date(nowMs).toISOString();
      const user: User = {
        id: newUserId(state, body.first_name, body.last_name),
        email,
        first_name: body.first_name,
        last_name: body.last_name,
        display_name: `${body.first_name} ${body.last_name}`,
        job_title: body.job_title ?? "",
        status: "invited",
        read_only: body.read_only ?? false,
        locale: body.locale ?? "fr-FR",
        timezone: body.timezone ?? "Europe/Paris",
        preferences: { default_landing: "portfolio", number_format: "fr", density: "comfortable" },
        alert_preferences: { email_digest: "daily", critical_push: true, muted_operation_ids: [] },
        created_at: at,
        updated_at: at,
        invited_at: at,
        invited_by: serviceAccount(key),
        invitation_expires_at: new Date(nowMs + INVITATION_VALID_DAYS * DAY_MS).toISOString(),
        activated_at: null,
        suspended_at: null,
        suspension_reason: null,
        password_reset_requested_at: null,
        last_login_at: null,
        erased_at: null,
      };
      state.data.users.push(user);
      return json(entityUserOf(user), 201);
    },
  }),
  defineRoute({
    id: "user_get",
    family: "users",
    method: "GET",
    path: "/users/{user_id}",
    scope: "users:read",
    kind: "read",
    summary: "Get a user",
    params: userParams,
    response: { status: 200, schema: entityUserSchema },
    refusals: { 404: ["user_not_found"] },
    handle({ params, state, now }) {
      completeDueErasures(state, now());
      return json(entityUserOf(findUser(state, params.user_id)));
    },
  }),
  defineRoute({
    id: "user_update",
    family: "users",
    method: "PATCH",
    path: "/users/{user_id}",
    scope: "users:write",
    kind: "write",
    summary: "Change a user",
    description:
      "Absent fields are left as they are. The status changes through activate and suspend; the address through a new invitation.",
    params: userParams,
    body: updateBody,
    response: { status: 200, schema: entityUserSchema },
    refusals: { 404: ["user_not_found"], 409: ["user_erased"] },
    example: () => ({ body: { job_title: "Analyste crédit senior" } }),
    handle({ params, body, state, now }) {
      completeDueErasures(state, now());
      const user = findUser(state, params.user_id);
      refuseErased(user);
      applyPersonChanges(user, body, new Date(now()).toISOString());
      return json(entityUserOf(user));
    },
  }),
  defineRoute({
    id: "user_activate",
    family: "users",
    method: "POST",
    path: "/users/{user_id}/activate",
    scope: "users:write",
    kind: "write",
    summary: "Activate an invited or suspended user",
    params: userParams,
    response: { status: 200, schema: entityUserSchema },
    refusals: moveRefusals,
    example: userReadyFor("activate"),
    handle(ctx) {
      const { user, at } = moveUser(ctx, "activate");
      Object.assign(user, {
        status: "approved",
        activated_at: at,
        invitation_expires_at: null,
        suspended_at: null,
        suspension_reason: null,
        updated_at: at,
      });
      return json(entityUserOf(user));
    },
  }),
  defineRoute({
    id: "user_suspend",
    family: "users",
    method: "POST",
    path: "/users/{user_id}/suspend",
    scope: "users:write",
    kind: "write",
    summary: "Suspend a user",
    description:
      "At once: the sandbox refuses to act for a suspended user (403 `delegated_user_not_approved`).",
    params: userParams,
    body: z.strictObject({ reason: z.string().trim().min(1).max(500).optional() }).optional(),
    response: { status: 200, schema: entityUserSchema },
    refusals: moveRefusals,
    example: userReadyFor("suspend"),
    handle(ctx) {
      const { user, at } = moveUser(ctx, "suspend");
      Object.assign(user, {
        status: "suspended",
        suspended_at: at,
        suspension_reason: ctx.body?.reason ?? null,
        updated_at: at,
      });
      return json(entityUserOf(user));
    },
  }),
  defineRoute({
    id: "user_reset_password",
    family: "users",
    method: "POST",
    path: "/users/{user_id}/password-reset",
    scope: "users:write",
    kind: "write",
    summary: "Send a password reset link",
    description: "Only to an approved user; the link is valid 24 hours.",
    params: userParams,
    response: { status: 202, schema: accountMessageSchema },
    refusals: moveRefusals,
    example: userReadyFor("reset_password"),
    handle(ctx) {
      const { user, at, nowMs } = moveUser(ctx, "reset_password");
      Object.assign(user, { password_reset_requested_at: at, updated_at: at });
      return json(
        {
          user_id: user.id,
          message: "password_reset",
          sent_to: user.email,
          sent_at: at,
          expires_at: new Date(nowMs + PASSWORD_RESET_VALID_MS).toISOString(),
        },
        202,
      );
    },
  }),
  defineRoute({
    id: "user_resend_invitation",
    family: "users",
    method: "POST",
    path: "/users/{user_id}/invitation",
    scope: "users:write",
    kind: "write",
    summary: "Send an invitation again",
    description: `Only while the account is invited, expired invitations included; the new one is valid ${INVITATION_VALID_DAYS} days.`,
    params: userParams,
    response: { status: 202, schema: accountMessageSchema },
    refusals: moveRefusals,
    example: userReadyFor("resend_invitation"),
    handle(ctx) {
      const { user, at, nowMs } = moveUser(ctx, "resend_invitation");
      const expiresAt = new Date(nowMs + INVITATION_VALID_DAYS * DAY_MS).toISOString();
      Object.assign(user, { invitation_expires_at: expiresAt, updated_at: at });
      return json(
        {
          user_id: user.id,
          message: "invitation",
          sent_to: user.email,
          sent_at: at,
          expires_at: expiresAt,
        },
        202,
      );
    },
  }),
];
